//go:build linux

package wasmhost

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// populateBlocks backs pages without changing them, and skips blocks
// within the image or past the reservation.
func TestPopulateBlocks(t *testing.T) {
	mem, ok := reserve(4*pageSize, 0)
	require.True(t, ok)
	defer release(mem)
	m := &cappedMemory{mapped: mem}
	perPage := uint32(pageSize / blockSize)
	blocks := []uint32{0, 1, 2*perPage + 3, 2*perPage + 4, 2*perPage + 5, 3 * perPage, 4 * perPage, 1 << 30}
	require.NotPanics(t, func() { populateBlocks(m, blocks, pageSize) })
	require.Equal(t, make([]byte, len(mem)), mem, "populating writes nothing")
	require.NotPanics(t, func() { populateBlocks(&cappedMemory{}, blocks, 0) }, "no reservation: nothing to do")
}

// A run of blocks of 1 MiB or more asks for huge pages, a shorter one does
// not; either way the pages read as zeros, and a memory that asked is not
// kept as a spare.
func TestPopulateBlocks_hugePages(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name string
		run  int // bytes of consecutive blocks
		huge bool
	}{
		{"below 1 MiB", mib - blockSize, false},
		{"at 1 MiB", mib, true},
		{"past 1 MiB", 3 * mib, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem, ok := reserve(8*mib, 0)
			require.True(t, ok)
			m := &cappedMemory{mapped: mem, image: &image{memory: make([]byte, pageSize)}}
			from := 2*mib + blockSize // not at a window's start
			var blocks []uint32
			for off := from; off < from+tt.run; off += blockSize {
				blocks = append(blocks, uint32(off/blockSize))
			}
			populateBlocks(m, blocks, pageSize)
			require.Equal(t, tt.huge, m.huge)
			require.Equal(t, make([]byte, len(mem)), mem, "populating writes nothing")
			_, p := spareImage(t, 1, 0)
			m.spares, m.buf = p, mem[:from+tt.run]
			m.Free()
			require.Equal(t, !tt.huge, len(p.spares) == 1, "kept as a spare only without huge pages")
			if tt.huge {
				return // released by Free
			}
			s, ok := p.spare(0)
			require.True(t, ok)
			release(s.mem)
		})
	}
}

// populateHuge asks only for windows within the reservation, whatever the
// range.
func TestPopulateHuge_withinTheReservation(t *testing.T) {
	const mib = 1 << 20
	mem, ok := reserve(3*mib, 0)
	require.True(t, ok)
	defer release(mem)
	require.NotPanics(t, func() { populateHuge(mem, 0, len(mem)) })
	require.NotPanics(t, func() { populateHuge(mem, len(mem)-mib, len(mem)) })
	require.False(t, populateHuge(mem, mib, mib), "an empty range asks for nothing")
	require.Equal(t, make([]byte, len(mem)), mem)
}
