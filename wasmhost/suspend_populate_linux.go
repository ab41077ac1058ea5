//go:build linux

package wasmhost

import (
	"syscall"
	"unsafe"
)

// remapAnonymous maps b, page-aligned and part of a reservation, anew as
// anonymous, private, zeroed memory (whatever was mapped there is gone),
// and reports whether it did. When it did not, b may be unmapped: the
// memory must be discarded.
func remapAnonymous(b []byte) bool {
	addr := uintptr(unsafe.Pointer(&b[0]))
	got, _, errno := syscall.Syscall6(syscall.SYS_MMAP, addr, uintptr(len(b)), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_FIXED|syscall.MAP_NORESERVE, ^uintptr(0), 0)
	return errno == 0 && got == addr
}

// adviseHuge asks for b, a 2 MiB-aligned window of anonymous memory, to be
// backed by a transparent huge page (MADV_HUGEPAGE), and reports whether
// the kernel took the advice (it does not where huge pages are off). The
// window's pages are then backed at its first touch, all at once, when a
// huge page is free, else 4 KiB at a time as before.
func adviseHuge(b []byte) bool { return syscall.Madvise(b, syscall.MADV_HUGEPAGE) == nil }
