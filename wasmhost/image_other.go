//go:build !linux

package wasmhost

// sealedFile is not available here (no memfd): restored instances copy the
// image into their memory.
func sealedFile([]byte) int { return -1 }

func closeFile(int) {}
