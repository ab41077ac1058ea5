package vmem

import "bytes"

// blockSize is the unit ResetBlocks compares and copies.
const blockSize = 4096

// ResetBlocks makes mem, a memory restored from the image whose bytes are
// img, byte for byte img again: the blocks that differ from it are copied
// from it (the others are its pages, shared or already equal). When cow
// says the image is mapped copy-on-write over mem, only the pages holding
// a private copy are compared (PrivatePages: the others are the image's
// file), scratch holding the page table entries read; else all are.
func ResetBlocks(mem, img []byte, cow bool, scratch *[]byte) {
	mem = mem[:len(img)]
	reset := func(off, end int) {
		for ; off < end; off += blockSize {
			e := min(off+blockSize, end)
			if !bytes.Equal(mem[off:e], img[off:e]) {
				copy(mem[off:e], img[off:e])
			}
		}
	}
	if cow {
		var ok bool
		if *scratch, ok = PrivatePages(mem, *scratch, reset); ok {
			return
		}
	}
	reset(0, len(img))
}
