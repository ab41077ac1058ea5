package wasmhost

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU reports, beside a benchmark's wall time, the CPU time the
// process spent per operation (its threads', the collector's included):
// on a machine other processes load, the wall time counts the time they
// took the CPU from the benchmark, the CPU time much less so.
func reportCPU(b *testing.B, loop func()) {
	before := processCPU()
	loop()
	if n := b.N; n > 0 {
		b.ReportMetric(float64(processCPU()-before)/float64(n), "cpu-ns/op")
	}
}

func processCPU() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
