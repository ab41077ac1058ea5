//go:build linux

package executor_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU this process has used, user and system, all its
// threads (the garbage collector's too): what a benchmark reports beside
// wall time, which on a loaded machine counts the time it waited for one.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
