//go:build !unix

package proc

import (
	"os"
	"syscall"
)

// KilledBy reports the signal that killed the process: never, where
// processes are not ended by signals.
func KilledBy(*os.ProcessState) (syscall.Signal, bool) { return 0, false }
