//go:build unix && !linux

package proc

import (
	"os/exec"
	"syscall"
)

// detect: without Linux's cgroups and PID namespaces, a process group is
// the best there is.
func detect() how { return how{m: MechanismProcessGroup} }

// start starts cmd as the leader of a new process group.
func start(_ how, cmd *exec.Cmd) (container, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return group{pgid: cmd.Process.Pid}, nil
}
