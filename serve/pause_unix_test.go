//go:build unix

package serve_test

import (
	"os"
	"syscall"
)

// pause stops p (SIGSTOP), as a paused VM or a debugger would: its
// monotonic clock runs on, its goroutines do not.
func pause(p *os.Process) error { return p.Signal(syscall.SIGSTOP) }

// unpause lets p go on (SIGCONT).
func unpause(p *os.Process) error { return p.Signal(syscall.SIGCONT) }
