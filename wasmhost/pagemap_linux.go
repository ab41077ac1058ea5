//go:build linux

package wasmhost

import (
	"encoding/binary"
	"os"
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

// privatePages calls visit with the offsets in b of every page of b (b
// page-aligned, whole pages) that may hold a private copy: b being a
// private mapping of a file, the others are the file's pages, never
// written through b. It reads b's entries of /proc/self/pagemap into buf
// (grown as needed, and returned) and reports false, having visited
// nothing, when it cannot.
func privatePages(b []byte, buf []byte, visit func(off, end int)) ([]byte, bool) {
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
	for i := range pages {
		e := binary.LittleEndian.Uint64(buf[8*i:])
		if e&pmSwap != 0 || e&pmPresent != 0 && e&pmFile == 0 {
			visit(i*ps, (i+1)*ps)
		}
	}
	return buf, true
}
