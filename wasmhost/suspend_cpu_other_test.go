//go:build !linux

package wasmhost

import "testing"

// reportCPU runs loop: the CPU time per operation is reported on Linux
// (suspend_cpu_linux_test.go).
func reportCPU(_ *testing.B, loop func()) { loop() }
