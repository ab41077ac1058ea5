//go:build linux

package wasmhost

import (
	"os"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/admit"
	"github.com/ptcx/ptcx/wasmhost/internal/vmem"
)

// spareImage is an image of two wasm pages of known bytes, and a pool of
// size spares for it, under a committed memory cap of maxBytes (0: none).
func spareImage(t *testing.T, size int, maxBytes int64) (*image, *pool) {
	t.Helper()
	img := &image{memory: make([]byte, 2*abi.PageSize)}
	for i := range img.memory {
		img.memory[i] = byte(i*7 + 1)
	}
	rt := &Runtime{image: img, admission: admit.New(100, maxBytes)}
	return img, &pool{rt: rt, size: size, charge: int64(len(img.memory)), stop: make(chan struct{})}
}

// usedSpare is a reservation of 8 pages that held the image and that a run
// wrote over (in the image's part and past it, to used bytes).
func usedSpare(t *testing.T, img *image, used int) spare {
	t.Helper()
	mem, ok := vmem.Reserve(8*abi.PageSize, 0)
	require.True(t, ok)
	t.Cleanup(func() { vmem.Release(mem) })
	copy(mem, img.memory)
	for _, off := range []int{0, 5000, len(img.memory) - 1} {
		mem[off] ^= 0xff
	}
	for off := len(img.memory); off < used; off += 4093 {
		mem[off] = 0x5a
	}
	return spare{mem: mem, used: used}
}

func TestPool_spare_resetToImage(t *testing.T) {
	tests := []struct {
		name string
		used int
	}{
		{"within the image", 2 * abi.PageSize},
		{"grown past the image", 5 * abi.PageSize},
		{"grown to the whole reservation", 8 * abi.PageSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, p := spareImage(t, 1, 0)
			require.True(t, p.keep(usedSpare(t, img, tt.used)))
			s, ok := p.spare(8 * abi.PageSize)
			require.True(t, ok)
			require.Equal(t, img.memory, s.mem[:len(img.memory)])
			require.Equal(t, make([]byte, len(s.mem)-len(img.memory)), s.mem[len(img.memory):])
			require.Equal(t, len(img.memory), s.used)
		})
	}
}

func TestPool_keep_bounds(t *testing.T) {
	img, p := spareImage(t, 2, 0)
	require.True(t, p.keep(usedSpare(t, img, 2*abi.PageSize)))
	require.True(t, p.keep(usedSpare(t, img, 2*abi.PageSize)), "at the pool's size")
	require.False(t, p.keep(usedSpare(t, img, 2*abi.PageSize)), "past the pool's size")
	p.close()
	require.False(t, p.keep(usedSpare(t, img, 2*abi.PageSize)), "closed")
	_, ok := p.spare(abi.PageSize)
	require.False(t, ok, "a closed pool has no spares")
	var none *pool
	require.False(t, none.keep(spare{}))
	_, ok = none.spare(abi.PageSize)
	require.False(t, ok)
}

func TestPool_spare_tooSmall(t *testing.T) {
	img, p := spareImage(t, 1, 0)
	require.True(t, p.keep(usedSpare(t, img, 2*abi.PageSize)))
	_, ok := p.spare(9 * abi.PageSize)
	require.False(t, ok, "a spare smaller than the limit is not used")
	s, ok := p.spare(8 * abi.PageSize)
	require.True(t, ok, "one of the limit is")
	require.Len(t, s.mem, 8*abi.PageSize)
}

func TestPool_keep_chargedToTheCap(t *testing.T) {
	// A cap of two spares' charge: the third does not fit.
	img, p := spareImage(t, 3, 2*2*abi.PageSize)
	require.True(t, p.keep(usedSpare(t, img, 2*abi.PageSize)))
	require.True(t, p.keep(usedSpare(t, img, 2*abi.PageSize)), "at the cap")
	require.False(t, p.keep(usedSpare(t, img, 2*abi.PageSize)), "past the cap")
	_, bytes, _ := p.rt.admission.Usage()
	require.EqualValues(t, 2*2*abi.PageSize, bytes)
	require.Equal(t, 2*2*abi.PageSize, int(p.rt.pooledBytes))

	_, ok := p.spare(8 * abi.PageSize)
	require.True(t, ok)
	_, bytes, _ = p.rt.admission.Usage()
	require.EqualValues(t, 2*abi.PageSize, bytes, "a spare taken is uncharged")
	require.True(t, p.yield(), "a spare is yielded")
	_, bytes, _ = p.rt.admission.Usage()
	require.Zero(t, bytes)
	require.False(t, p.yield(), "nothing left to yield")
}

func TestPool_keep_grownSpareChargedAsIdle(t *testing.T) {
	// A cap of one spare's charge: a spare that grew past the image is
	// kept at the cap, its growth given back first, so that its backed
	// pages are at most the image's, as an idle instance's.
	tests := []struct {
		name string
		used int
	}{
		{"the image's size", 2 * abi.PageSize},
		{"grown past the image", 5 * abi.PageSize},
		{"grown to the whole reservation", 8 * abi.PageSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, p := spareImage(t, 2, 2*abi.PageSize)
			s := usedSpare(t, img, tt.used)
			require.True(t, p.keep(s), "at the cap")
			require.Zero(t, residentPages(t, s.mem[len(img.memory):]), "what it grew to is not backed")
			require.Equal(t, make([]byte, len(s.mem)-len(img.memory)), s.mem[len(img.memory):], "and reads as zeros")
			require.Equal(t, 2*abi.PageSize, int(p.rt.pooledBytes), "charged the image's size")
			require.False(t, p.keep(usedSpare(t, img, tt.used)), "past the cap")
		})
	}
}

// residentPages counts the pages of b, part of a reservation, that are
// backed.
func residentPages(t *testing.T, b []byte) int {
	t.Helper()
	vec := make([]byte, (len(b)+os.Getpagesize()-1)/os.Getpagesize())
	_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	require.Zero(t, errno, "mincore: %v", errno)
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}
