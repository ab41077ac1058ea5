//go:build !unix

package proc

import (
	"os"
	"os/exec"
)

// detect: tool process trees are not contained on this OS.
func detect() how { return how{m: MechanismNone} }

// start starts cmd; only it can be killed, not what it starts.
func start(_ how, cmd *exec.Cmd) (container, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return alone{cmd.Process}, nil
}

// alone is a "tree" of one process.
type alone struct{ p *os.Process }

func (a alone) signal(sig os.Signal) { _ = a.p.Signal(sig) }
func (a alone) kill()                { _ = a.p.Kill() }
func (alone) release()               {}
