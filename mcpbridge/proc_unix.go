//go:build unix

package mcpbridge

import (
	"os/exec"
	"syscall"
)

// ownGroup makes the upstream the leader of a new process group, so that it
// and everything it starts can be signalled together.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group pid leads. A group that no
// longer exists is not an error.
func signalGroup(pid int, sig syscall.Signal) {
	_ = syscall.Kill(-pid, sig)
}

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)
