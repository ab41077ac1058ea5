package proc

import "os"

// ExitCode is the shell's convention for how a process ended: its exit
// status, or 128+N when signal N killed it.
func ExitCode(ps *os.ProcessState) int {
	if sig, ok := KilledBy(ps); ok {
		return 128 + int(sig)
	}
	return ps.ExitCode()
}
