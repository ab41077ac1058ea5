//go:build linux

package wasmhost

import "syscall"

// reserve maps n bytes of anonymous, private, zeroed memory without
// reserving swap for it: the kernel backs a page only when the guest first
// touches it, so a memory that may grow to n costs only what it uses, and
// growing it copies nothing.
func reserve(n uint64) ([]byte, bool) {
	b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	return b, err == nil
}

// release unmaps what reserve mapped.
func release(b []byte) { _ = syscall.Munmap(b) }
