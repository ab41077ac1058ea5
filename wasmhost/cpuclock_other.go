//go:build !linux

package wasmhost

// threadClocks is false where the host does not read a thread's CPU time:
// compute time is then wall time inside exports, an upper bound of it,
// and the watchdog judges deadlines in wall time (see compute.go).
const threadClocks = false

func threadCPU() int64 { return 0 }

func threadID() int { return 0 }

func threadCPUOf(int) (int64, bool) { return 0, false }
