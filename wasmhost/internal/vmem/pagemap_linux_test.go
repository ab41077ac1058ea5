//go:build linux

package vmem

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// cowImage maps a sealed memfd of pages pages of known bytes private over a
// new reservation, as a restore from the image does.
func cowImage(t *testing.T, pages int) (img, mem []byte) {
	t.Helper()
	ps := os.Getpagesize()
	img = make([]byte, pages*ps)
	for i := range img {
		img[i] = byte(i*7 + 1)
	}
	fd := SealedFile(img)
	require.GreaterOrEqual(t, fd, 0, "memfd")
	t.Cleanup(func() { CloseFile(fd) })
	mem, ok := Reserve(uint64(2*len(img)), 0)
	require.True(t, ok)
	t.Cleanup(func() { Release(mem) })
	require.True(t, MapFile(mem, fd, len(img)))
	return img, mem[:len(img)]
}

func TestPrivatePages_onlyWrittenPages(t *testing.T) {
	ps := os.Getpagesize()
	img, mem := cowImage(t, 16)
	_ = mem[5*ps] // read only: still the file's page
	written := []int{0, 3, 15}
	for _, p := range written {
		mem[p*ps+10] ^= 0xff
	}
	var got []int
	_, ok := PrivatePages(mem, nil, func(off, end int) {
		require.Equal(t, ps, end-off)
		got = append(got, off/ps)
	})
	require.True(t, ok)
	require.Equal(t, written, got)
	require.NotEqual(t, img, mem)
}

func TestResetBlocks_copyOnWrite(t *testing.T) {
	ps := os.Getpagesize()
	tests := []struct {
		name    string
		written []int // pages written
		cow     bool
	}{
		{"nothing written", nil, true},
		{"the first page", []int{0}, true},
		{"the last page", []int{15}, true},
		{"every page", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, true},
		{"some pages, compared in full", []int{2, 9}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, mem := cowImage(t, 16)
			for _, p := range tt.written {
				mem[p*ps] ^= 0xff
				mem[(p+1)*ps-1] ^= 0xff
			}
			var scratch []byte
			ResetBlocks(mem, img, tt.cow, &scratch)
			require.Equal(t, img, mem)
			// Reset twice: the pages now private hold the image's bytes.
			mem[ps+1] ^= 0xff
			ResetBlocks(mem, img, tt.cow, &scratch)
			require.Equal(t, img, mem)
		})
	}
}

// MapsImage tells a private mapping of the image's file, which reverting
// gives back the image, from a copy of it, which reverting zeroes.
func TestMapsImage(t *testing.T) {
	ps := os.Getpagesize()
	img, mem := cowImage(t, 8)
	clear(img[2*ps : 3*ps]) // a page of zeros: not looked at
	filled := FilledPages(img)
	require.Equal(t, []uint32{0, 1, 3, 4, 5, 6, 7}, filled)
	require.True(t, MapsImage(mem, filled), "mapped, nothing read")
	_ = mem[4*ps] // read: the file's page, present
	require.True(t, MapsImage(mem, filled), "mapped, a page read")
	require.False(t, MapsImage(mem, nil), "no filled page: nothing shows the mapping")

	copied, ok := Reserve(uint64(len(img)), 0)
	require.True(t, ok)
	t.Cleanup(func() { Release(copied) })
	copy(copied, img)
	require.False(t, MapsImage(copied[:len(img)], filled), "a copy, anonymous memory")

	mem[5*ps] ^= 0xff // a private copy now: the memory is no longer the image alone
	require.False(t, MapsImage(mem, filled), "a filled page written")
	require.False(t, MapsImage(mem[:len(mem)-1], filled), "not whole pages")
	require.False(t, MapsImage(mem[:2*ps], filled), "shorter than the image's filled pages")
}
