package wasmhost

import (
	"fmt"
	"unsafe"

	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
	"github.com/ptcx/ptcx/wasmhost/internal/vmem"
)

// Backing a resumed memory's pages. A snapshot's blocks are written over a
// memory restored from the image, most of whose pages are not backed yet:
// those past the image are a fresh reservation's, those within it the
// image's file, mapped copy-on-write. Left to fault one by one as the
// blocks are written, each costs 2-4 µs on the development VM (a
// copy-on-write one the most: the image's page is copied before the block
// is written over it), which for megabytes of heap is most of a resume.
// populateSnapshot backs them first, in one call per run of blocks, and,
// where a snapshot writes much of a 2 MiB window, the whole window at once
// as a transparent huge page (about a tenth of the cost of its 512 pages
// one by one: docs/performance-notebook.md).

// hugePage is the size of a transparent huge page (x86-64 and arm64 with
// 4 KiB pages).
const hugePage = 2 << 20

// hugeWindowBlocks is how many of a 2 MiB window's 512 blocks a snapshot
// must write for its window to be backed as one huge page: about what
// backing a huge page costs (its 2 MiB zeroed) in 4 KiB pages.
const hugeWindowBlocks = 128

// populateSnapshot backs the pages of m, a memory restored from the image
// img, that the snapshot's blocks are about to be written to: a window of
// at least hugeWindowBlocks of them as a huge page (a window over the
// image's copy-on-write mapping is mapped anew, anonymous, and the image's
// bytes copied into it: a huge page cannot be a file's private copy), the
// others a run of blocks at a time. It changes no byte of the memory, and
// fails only when a window cannot be mapped anew (the memory must then be
// discarded). A memory without a reservation (not Linux, or the engine's
// own) is left as it is.
func populateSnapshot(m *cappedMemory, img []byte, blocks []uint32) error {
	res := m.mapped
	if res == nil || len(blocks) == 0 {
		return nil
	}
	base := int(uintptr(unsafe.Pointer(&res[0])) % hugePage) // the reservation's offset in its first window
	for i := 0; i < len(blocks); {
		// The blocks of one window: [i, j).
		ws := (base+int(blocks[i])*snapshot.BlockSize)&^(hugePage-1) - base
		we := ws + hugePage
		j := i + 1
		for j < len(blocks) && int(blocks[j])*snapshot.BlockSize < we {
			j++
		}
		if huge, err := populateWindow(m, img, ws, blocks[i:j]); err != nil {
			return err
		} else if !huge {
			populateRuns(res, blocks[i:j])
		}
		i = j
	}
	return nil
}

// populateWindow backs the window of m's reservation that starts at ws
// (relative to the reservation) as one huge page, when it holds blocks of
// the snapshot, at least hugeWindowBlocks of them, lies whole within the
// reservation, and is not over the image's pages copied already (those are
// a memory's that does not map the image: they are backed) nor over the
// image of a memory no larger than the image (its instance may be
// recycled into the pool, pool_recycle.go, where it must hold no more
// than an idle instance does). It reports
// whether it did; when it did not, the window is as it was, or, where the
// kernel has no huge pages, anonymous with the image's bytes copied in.
func populateWindow(m *cappedMemory, img []byte, ws int, blocks []uint32) (bool, error) {
	res := m.mapped
	we := ws + hugePage
	if len(blocks) < hugeWindowBlocks || ws < 0 || we > len(res) || (ws < len(img) && (!m.cow || len(m.buf) <= len(img))) {
		return false, nil
	}
	w := res[ws:we]
	if ws < len(img) {
		if !remapAnonymous(w) {
			return false, fmt.Errorf("wasmhost: map %d bytes of the memory anew for the snapshot's blocks", len(w))
		}
		// The image's mapping is gone from this window; elsewhere it may
		// stay, but the memory is no longer the image's mapping alone.
		m.cow = false
	}
	huge := adviseHuge(w)
	if huge {
		// The first touch backs the whole window; should no huge page be
		// free, only the blocks' span is backed, 4 KiB at a time.
		m.huge = true
		vmem.Populate(res[int(blocks[0])*snapshot.BlockSize : int(blocks[len(blocks)-1]+1)*snapshot.BlockSize])
	}
	if ws < len(img) {
		copy(w, img[ws:min(we, len(img))])
	}
	return huge, nil
}

// populateRuns backs the pages of the blocks, a run of consecutive ones at
// a time (within the image, the copy-on-write copies are made: the blocks
// are written over them next).
func populateRuns(res []byte, blocks []uint32) {
	for i := 0; i < len(blocks); {
		j := i + 1
		for j < len(blocks) && blocks[j] == blocks[j-1]+1 {
			j++
		}
		if start, end := int(blocks[i])*snapshot.BlockSize, int(blocks[j-1]+1)*snapshot.BlockSize; end <= len(res) {
			vmem.Populate(res[start:end])
		}
		i = j
	}
}
