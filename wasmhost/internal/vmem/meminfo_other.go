//go:build !linux

package vmem

// PhysicalMemory is not read outside Linux: the committed memory cap then
// defaults to fallbackCommittedMemory.
func PhysicalMemory() (int64, bool) { return 0, false }
