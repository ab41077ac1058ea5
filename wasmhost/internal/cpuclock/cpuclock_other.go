//go:build !linux

package cpuclock

// Supported is false where the host does not read a thread's CPU time:
// compute time is then wall time inside exports, an upper bound of it,
// and the watchdog judges deadlines in wall time (see compute.go).
const Supported = false

func Now() int64 { return 0 }

func ThreadID() int { return 0 }

func Of(int) (int64, bool) { return 0, false }
