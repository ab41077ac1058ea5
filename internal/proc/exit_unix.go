//go:build unix

package proc

import (
	"os"
	"syscall"
)

// KilledBy reports the signal that killed the process, if one did.
func KilledBy(ps *os.ProcessState) (syscall.Signal, bool) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal(), true
	}
	return 0, false
}
