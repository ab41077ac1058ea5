package wasifs

import (
	"encoding/binary"
	"testing"
)

// FuzzFuncs calls the file functions with hostile parameters on a small
// memory holding hostile bytes: each returns a WASI errno, never panics,
// and the table stays bounded and consistent with what it reports.
func FuzzFuncs(f *testing.F) {
	f.Add(uint8(2), []byte("\x03\x00\x00\x00\x01\x00\x00\x00\x00\x01\x00\x00\x07\x00\x00\x00"), []byte("lib.zip"), uint64(0), uint64(0))
	f.Add(uint8(4), []byte{}, []byte("../../x"), uint64(1<<63), uint64(3))
	f.Add(uint8(12), []byte{0xff, 0xff, 0xff, 0xff}, []byte("sub"), uint64(1), uint64(1<<32-1))
	f.Fuzz(func(t *testing.T, which uint8, args []byte, mem []byte, a, b uint64) {
		tab := New(testFS, "/usr/local/lib")
		m := make(sliceMemory, 256)
		copy(m, mem)
		for round := range 4 {
			fn := Funcs[(int(which)+round)%len(Funcs)]
			stack := make([]uint64, len(fn.Params))
			for i := range stack {
				var v uint64
				if len(args) >= 8*(i+1) {
					v = binary.LittleEndian.Uint64(args[8*i:])
				}
				switch i % 3 {
				case 1:
					v ^= a
				case 2:
					v ^= b
				}
				if fn.Params[i] == 'i' {
					v = uint64(uint32(v))
				}
				stack[i] = v
			}
			if len(stack) == 0 {
				stack = []uint64{0}
			}
			fn.Fn(tab, m, stack)
			if stack[0] > errnoNotcapable {
				t.Fatalf("%s%v: errno %d", fn.Name, stack, stack[0])
			}
			files := tab.Files()
			if len(files) > MaxOpen {
				t.Fatalf("%d files open", len(files))
			}
			for _, e := range files {
				if e.Offset < 0 {
					t.Fatalf("%s: offset %d", fn.Name, e.Offset)
				}
			}
			if err := New(testFS, "/usr/local/lib").Restore(files); err != nil {
				t.Fatalf("the table's own files do not restore: %v", err)
			}
		}
	})
}
