//go:build !linux

package wasmhost

// physicalMemory is not read outside Linux: the committed memory cap then
// defaults to fallbackCommittedMemory.
func physicalMemory() (int64, bool) { return 0, false }
