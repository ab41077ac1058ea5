//go:build linux

package wasmhost

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
	"github.com/ptcx/ptcx/wasmhost/internal/vmem"
)

// alignedReservation returns a reservation of n bytes (whole 2 MiB
// windows) that starts at a window's start, released at the test's end.
func alignedReservation(t *testing.T, n int) []byte {
	t.Helper()
	mem := aligned(t, n)
	t.Cleanup(func() { vmem.Release(mem) })
	return mem
}

// aligned returns a reservation of n bytes that starts at a window's
// start: the caller releases it.
func aligned(t *testing.T, n int) []byte {
	t.Helper()
	mem, ok := vmem.Reserve(uint64(n+hugePage), 0)
	require.True(t, ok)
	off := (hugePage - int(uintptr(unsafe.Pointer(&mem[0]))%hugePage)) % hugePage
	if off > 0 {
		vmem.Release(mem[:off])
	}
	if end := off + n; end < len(mem) {
		vmem.Release(mem[end:])
	}
	return mem[off : off+n]
}

// windowBlocks returns n consecutive blocks from the start of window w
// plus first blocks.
func windowBlocks(w, first, n int) []uint32 {
	var blocks []uint32
	for i := range n {
		blocks = append(blocks, uint32(w*hugePage/snapshot.BlockSize+first+i))
	}
	return blocks
}

// populateSnapshot backs pages without changing them, and skips blocks
// past the reservation and memories without one.
func TestPopulateSnapshot(t *testing.T) {
	mem := alignedReservation(t, 2*hugePage)
	m := &cappedMemory{mapped: mem}
	blocks := []uint32{0, 1, 300, 301, 302, 700, 1023, 1 << 30}
	require.NoError(t, populateSnapshot(m, nil, blocks))
	require.False(t, m.huge, "no window holds enough blocks")
	require.Equal(t, 5, residentPages(t, mem[:hugePage]), "the blocks' pages are backed")
	require.Equal(t, 2, residentPages(t, mem[hugePage:]))
	require.Equal(t, make([]byte, len(mem)), mem, "populating writes nothing")
	require.NoError(t, populateSnapshot(&cappedMemory{}, nil, blocks), "no reservation: nothing to do")
	require.NoError(t, populateSnapshot(m, nil, nil))
}

// A window that holds hugeWindowBlocks of the snapshot's blocks or more is
// backed as a huge page, one with fewer a run of blocks at a time; either
// way the pages read as zeros, and a memory that asked for huge pages is
// not kept as a spare.
func TestPopulateSnapshot_hugeWindows(t *testing.T) {
	tests := []struct {
		name   string
		blocks int
		huge   bool
	}{
		{"below", hugeWindowBlocks - 1, false},
		{"at", hugeWindowBlocks, true},
		{"past", hugeWindowBlocks + 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := aligned(t, 4*hugePage)
			m := &cappedMemory{mapped: mem, image: &image{memory: make([]byte, abi.PageSize)}}
			blocks := windowBlocks(1, 7, tt.blocks) // past the image, not at the window's start
			require.NoError(t, populateSnapshot(m, m.image.memory, blocks))
			require.Equal(t, tt.huge, m.huge)
			require.Equal(t, make([]byte, len(mem)), mem, "populating writes nothing")
			_, p := spareImage(t, 1, 0)
			m.spares, m.buf = p, mem[:2*hugePage]
			m.Free() // releases the reservation, unless it is kept
			require.Equal(t, !tt.huge, len(p.spares) == 1, "kept as a spare only without huge pages")
			if !tt.huge {
				vmem.Release(mem)
			}
		})
	}
}

// A window over the image's copy-on-write mapping that holds enough blocks
// is mapped anew with the image's bytes in it; one with fewer stays the
// image's mapping, the blocks' pages copied.
func TestPopulateSnapshot_windowOverTheImage(t *testing.T) {
	img := make([]byte, 9*abi.PageSize) // 144 blocks: more than hugeWindowBlocks
	for i := range img {
		img[i] = byte(i*13 + 5)
	}
	fd := vmem.SealedFile(img)
	require.GreaterOrEqual(t, fd, 0)
	t.Cleanup(func() { vmem.CloseFile(fd) })
	tests := []struct {
		name   string
		blocks int
		remap  bool
	}{
		{"below", hugeWindowBlocks - 1, false},
		{"at", hugeWindowBlocks, true},
		{"past", hugeWindowBlocks + 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := alignedReservation(t, 2*hugePage)
			require.True(t, vmem.MapFile(mem, fd, len(img)))
			m := &cappedMemory{mapped: mem, buf: mem[:len(img)+abi.PageSize], cow: true} // grown past the image
			require.NoError(t, populateSnapshot(m, img, windowBlocks(0, 10, tt.blocks)))
			require.Equal(t, img, mem[:len(img)], "the image's bytes, mapped or copied")
			require.Equal(t, make([]byte, len(mem)-len(img)), mem[len(img):])
			require.Equal(t, !tt.remap, m.cow, "the image is no longer mapped over a window mapped anew")
			require.Equal(t, tt.remap, m.huge)
		})
	}
	t.Run("a memory the image's size", func(t *testing.T) {
		mem := alignedReservation(t, 2*hugePage)
		require.True(t, vmem.MapFile(mem, fd, len(img)))
		m := &cappedMemory{mapped: mem, buf: mem[:len(img)], cow: true}
		require.NoError(t, populateSnapshot(m, img, windowBlocks(0, 0, len(img)/snapshot.BlockSize)))
		require.False(t, m.huge, "its instance may be recycled: no huge page")
		require.True(t, m.cow)
		require.Equal(t, img, mem[:len(img)])
	})
	t.Run("a memory that copied the image", func(t *testing.T) {
		mem := alignedReservation(t, 2*hugePage)
		copy(mem, img)
		m := &cappedMemory{mapped: mem, buf: mem[:len(img)+abi.PageSize]}
		require.NoError(t, populateSnapshot(m, img, windowBlocks(0, 10, 2*hugeWindowBlocks)))
		require.False(t, m.huge, "its pages are backed already: nothing to gain")
		require.Equal(t, img, mem[:len(img)])
	})
}

// A window that is not whole within the reservation is backed a run of
// blocks at a time, whatever it holds.
func TestPopulateSnapshot_windowPastTheReservation(t *testing.T) {
	mem := alignedReservation(t, 2*hugePage)
	m := &cappedMemory{mapped: mem[:hugePage+hugePage/2]}
	require.NoError(t, populateSnapshot(m, nil, windowBlocks(1, 0, hugeWindowBlocks+1)))
	require.False(t, m.huge)
	require.Equal(t, hugeWindowBlocks+1, residentPages(t, mem[hugePage:hugePage+hugePage/2]))
}
