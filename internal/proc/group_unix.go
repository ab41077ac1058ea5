//go:build unix

package proc

import (
	"os"
	"syscall"
)

// group is a tree held together by a process group that its direct child
// leads.
type group struct{ pgid int }

func (g group) signal(sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok {
		_ = syscall.Kill(-g.pgid, s)
	}
}

func (g group) kill() { _ = syscall.Kill(-g.pgid, syscall.SIGKILL) }

// release has nothing to free.
func (group) release() {}
