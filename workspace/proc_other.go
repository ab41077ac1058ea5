//go:build !unix

package workspace

import (
	"os"
	"os/exec"
)

// ownGroup does nothing where there are no Unix process groups: only the
// shell itself is killed at a timeout.
func ownGroup(*exec.Cmd) {}

// killGroup kills the shell.
func killGroup(p *os.Process) { _ = p.Kill() }

// exitCode returns the exit status.
func exitCode(ps *os.ProcessState) int { return ps.ExitCode() }
