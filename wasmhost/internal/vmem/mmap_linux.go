//go:build linux

package vmem

import (
	"syscall"
	"unsafe"
)

// reserve maps n bytes of anonymous, private, zeroed memory without
// reserving swap for it: the kernel backs a page only when the guest first
// touches it, so a memory that may grow to n costs only what it uses, and
// growing it copies nothing. The first populate bytes are backed at once,
// in one call: faulting them in one page at a time costs several times
// more, and every instance touches its initial memory.
func Reserve(n, populate uint64) ([]byte, bool) {
	b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, false
	}
	if populate = min(populate, n); populate > 0 {
		// Best effort: kernels before 5.14 refuse it, and the pages then
		// fault in as they are touched.
		_ = syscall.Madvise(b[:populate], madvPopulateWrite)
	}
	return b, true
}

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14), which package
// syscall does not name.
const madvPopulateWrite = 23

// discard gives the pages of b, part of a reservation, back to the kernel:
// they read as zeros again.
func Discard(b []byte) {
	if syscall.Madvise(b, syscall.MADV_DONTNEED) != nil {
		clear(b)
	}
}

// revert gives the pages of b, a private mapping of a file (MapFile), back
// to the kernel, private copies and all: b reads as the file's bytes again,
// and holds no memory until touched. It reports whether it did (else b is
// unchanged).
func Revert(b []byte) bool { return len(b) > 0 && syscall.Madvise(b, syscall.MADV_DONTNEED) == nil }

// populate backs the pages of b, part of a reservation, in one call, as
// reserve does: cheaper than a fault at each first write. Best effort.
func Populate(b []byte) { _ = syscall.Madvise(b, madvPopulateWrite) }

// release unmaps what reserve mapped.
func Release(b []byte) { _ = syscall.Munmap(b) }

// MapFile maps the first n bytes of the file fd private and writable over
// the start of dst, a reservation made by reserve: the pages are the file's
// until written, then private copies (copy-on-write). It reports whether
// the mapping was made; dst is unchanged when it was not.
func MapFile(dst []byte, fd int, n int) bool {
	if n <= 0 || n > len(dst) || n%syscall.Getpagesize() != 0 {
		return false
	}
	addr := uintptr(unsafe.Pointer(&dst[0]))
	got, _, errno := syscall.Syscall6(syscall.SYS_MMAP, addr, uintptr(n), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_FIXED, uintptr(fd), 0)
	if errno == 0 && got == addr {
		return true
	}
	// A failed MAP_FIXED may have unmapped the range: map it anonymous
	// again, so the caller can copy into it.
	_, _, _ = syscall.Syscall6(syscall.SYS_MMAP, addr, uintptr(n), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_FIXED|syscall.MAP_NORESERVE, ^uintptr(0), 0)
	return false
}
