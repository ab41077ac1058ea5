//go:build linux

package vmem

import (
	"encoding/binary"
	"os"
	"slices"
	"sync"
	"syscall"
	"unsafe"
)

// Bits of a /proc/self/pagemap entry (Documentation/admin-guide/mm/pagemap.rst).
const (
	pmPresent = 1 << 63
	pmSwap    = 1 << 62
	pmFile    = 1 << 61 // a page of a file (or shared anonymous memory)
)

// pagemap is /proc/self/pagemap, opened once, or nil where it cannot be.
var pagemap = sync.OnceValue(func() *os.File {
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return nil
	}
	return f
})

// PrivatePages calls visit with the offsets in b of every page of b (b
// page-aligned, whole pages) that may hold a private copy: b being a
// private mapping of a file, the others are the file's pages, never
// written through b. It reads b's entries of /proc/self/pagemap into buf
// (grown as needed, and returned) and reports false, having visited
// nothing, when it cannot.
func PrivatePages(b []byte, buf []byte, visit func(off, end int)) ([]byte, bool) {
	buf, ok := pageEntries(b, buf)
	if !ok {
		return buf, false
	}
	ps := os.Getpagesize()
	for i := range len(b) / ps {
		e := binary.LittleEndian.Uint64(buf[8*i:])
		if e&pmSwap != 0 || e&pmPresent != 0 && e&pmFile == 0 {
			visit(i*ps, (i+1)*ps)
		}
	}
	return buf, true
}

// pageEntries reads the /proc/self/pagemap entries of b's pages (b
// page-aligned, whole pages) into buf, grown as needed, and reports false
// when it cannot.
func pageEntries(b []byte, buf []byte) ([]byte, bool) {
	f, ps := pagemap(), os.Getpagesize()
	if f == nil || len(b) == 0 || len(b)%ps != 0 || uintptr(unsafe.Pointer(&b[0]))%uintptr(ps) != 0 {
		return buf, false
	}
	pages := len(b) / ps
	if cap(buf) < 8*pages {
		buf = make([]byte, 8*pages)
	}
	buf = buf[:8*pages]
	off := int64(uintptr(unsafe.Pointer(&b[0]))/uintptr(ps)) * 8
	for done := 0; done < len(buf); {
		n, err := syscall.Pread(int(f.Fd()), buf[done:], off+int64(done))
		if err != nil || n <= 0 {
			return buf, false
		}
		done += n
	}
	return buf, true
}

// FilledPages returns the indices of the pages of img (whole pages) that
// are not all zeros: those MapsImage looks at.
func FilledPages(img []byte) []uint32 {
	ps := os.Getpagesize()
	if len(img)%ps != 0 {
		return nil
	}
	var filled []uint32
	for i := 0; i < len(img); i += ps {
		if slices.ContainsFunc(img[i:i+ps], func(c byte) bool { return c != 0 }) {
			filled = append(filled, uint32(i/ps))
		}
	}
	return filled
}

// MapsImage reports whether b, a memory that starts with the bytes of an
// image and that nothing has written yet, holds them through a private
// mapping of a file, as wasmtime's copy-on-write memory initialisation
// makes it: every one of its filled pages (FilledPages of the image, at
// least one) is absent or a page of a file, never anonymous memory or
// swapped. Anonymous memory reads as zeros where it is absent, so a filled
// page is anonymous only when the image was copied into b; then reverting
// b's pages (cool: madvise) would zero them instead of giving the image
// back, and a page absent from b would not read as the image's
// (resetBlocks' copy-on-write path).
func MapsImage(b []byte, filled []uint32) bool {
	buf, ok := pageEntries(b, nil)
	if !ok || len(filled) == 0 {
		return false
	}
	for _, p := range filled {
		if int(p) >= len(buf)/8 {
			return false
		}
		e := binary.LittleEndian.Uint64(buf[8*p:])
		if e&pmSwap != 0 || e&pmPresent != 0 && e&pmFile == 0 {
			return false
		}
	}
	return true
}
