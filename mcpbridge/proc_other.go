//go:build !unix

package mcpbridge

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup does nothing where there are no Unix process groups: only the
// upstream itself can be stopped, not what it started.
func ownGroup(*exec.Cmd) {}

// signalGroup kills the upstream process; there is no gentler signal.
func signalGroup(pid int, _ syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)
