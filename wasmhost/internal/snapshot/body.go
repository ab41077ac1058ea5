package snapshot

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/zeebo/xxh3"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
)

// The body of a snapshot of format 4 (snapshot.go): written in one pass
// over the guest's memory, a block at a time, and written back into an
// instance's memory in one pass over the snapshot's data.

// Encode writes st (its memory whole) as a snapshot of a run
// restored from img, and returns it with its inflated size. Each block of
// the memory is compared with the image's (or, past it, with zero) and, if
// it differs, copied into the snapshot and hashed while it is in the
// cache: one pass over memory.
//
// The snapshot's size is known only once the blocks are, so it is written
// into the first of these that has room for the whole memory, or else the
// larger of: dst (Resumption.SnapshotBuffer), what take returns for that
// size (the Runtime's free list, snapshot_buffers.go: its smallest buffer
// of that size, else its largest); take and give may be nil. A buffer
// already written costs the copy alone, where a new one of megabytes costs
// as much again in zeroing, page faults and collections. Should the
// buffer run out, the blocks left are counted, a buffer of the exact size
// made (NewBuffer), what was written moved into it, and a buffer
// taken from the free list given back (give). The snapshot returned keeps
// its buffer's capacity: the caller clips it before it hands it out.
func Encode(img *Base, st *State, dst []byte, take func(size int) []byte, give func([]byte)) ([]byte, int, error) {
	meta, err := json.Marshal(&st.Meta)
	if err != nil {
		return nil, 0, fmt.Errorf("wasmhost: encode the run's table: %w", err)
	}
	if len(meta) > maxMeta {
		return nil, 0, fmt.Errorf("the run's table (calls, answers, logs, timers) is %d bytes, over the %d a snapshot holds "+
			"(wasmhost.MaxSnapshotMetaBytes)", len(meta), maxMeta)
	}
	mem, base := st.Memory, img.Memory
	if len(mem)%abi.PageSize != 0 || len(mem) < len(base) {
		return nil, 0, fmt.Errorf("wasmhost: the guest's memory of %d bytes is not whole pages past the image's %d", len(mem), len(base))
	}
	n := len(mem) / BlockSize
	bodyAt := HeaderSize + len(img.Engine) + HeaderTail
	fixed := bodyAt + 4 + len(meta) + 4 + 4
	most := fixed + n*(BlockSize+4)
	out, taken := dst[:0], false
	if cap(out) < most && take != nil {
		if b := take(most); cap(b) > cap(out) {
			out, taken = b[:0], true
		} else if b != nil && give != nil {
			give(b)
		}
	}
	out = AppendHeader(out, Format, img.ModuleHash[:], img.MemoryHash[:], img.Engine, CodecStored, 0)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(meta)))
	out = append(out, meta...)
	out = binary.LittleEndian.AppendUint32(out, uint32(n/(abi.PageSize/BlockSize)))
	dataAt := len(out)
	index := make([]uint32, 0, min(n, max(cap(out)-dataAt, 0)/BlockSize+1))
	var sums xxh3.Hasher
	var sum [8]byte
	for i := range n {
		off := i * BlockSize
		if !Stored(mem, base, off) {
			continue
		}
		block := mem[off : off+BlockSize : off+BlockSize]
		if len(out)+BlockSize+4*(len(index)+1)+4 > cap(out) {
			// The blocks left are counted (a second read of them, once):
			// the buffer made holds them exactly.
			rest := 1 + countChanged(mem, base, i+1)
			grown := NewBuffer(len(out) + rest*(BlockSize+4) + 4*len(index) + 4)
			grown = append(grown, out...)
			if taken && give != nil {
				give(out[:0])
			}
			out, taken = grown, false
		}
		at := len(out)
		out = append(out, block...)
		binary.LittleEndian.PutUint64(sum[:], xxh3.Hash(out[at:]))
		_, _ = sums.Write(sum[:])
		index = append(index, uint32(i))
	}
	l := BodyLayout{DataAt: dataAt - bodyAt, IndexAt: len(out) - bodyAt}
	for _, i := range index {
		out = binary.LittleEndian.AppendUint32(out, i)
	}
	out = binary.LittleEndian.AppendUint32(out, uint32(len(index)))
	raw := len(out) - bodyAt
	binary.LittleEndian.PutUint64(out[bodyAt-8-16:], uint64(raw))
	binary.LittleEndian.PutUint64(out[bodyAt-16:], tableSum(out[:bodyAt-16], out[bodyAt:], l))
	binary.LittleEndian.PutUint64(out[bodyAt-8:], sums.Sum64())
	return out, raw, nil
}

// countChanged returns how many blocks of mem from block from on a
// snapshot of it stores.
func countChanged(mem, img []byte, from int) int {
	count := 0
	for off := from * BlockSize; off < len(mem); off += BlockSize {
		if Stored(mem, img, off) {
			count++
		}
	}
	return count
}

// BodyLayout is where the parts of a format-4 body are, in bytes from its
// start: the data from dataAt, the index from indexAt.
type BodyLayout struct {
	DataAt, IndexAt int
	pages, count    uint32
}

// Layout4 reads the lengths of a format-4 body and checks that they agree
// with its size.
func Layout4(body []byte) (BodyLayout, error) {
	if len(body) < 12 {
		return BodyLayout{}, Refuse("its body of %d bytes is too short for its table's length, its pages and its block count", len(body))
	}
	metaLen := binary.LittleEndian.Uint32(body)
	if int64(metaLen) > int64(maxMeta) || int64(metaLen)+12 > int64(len(body)) {
		return BodyLayout{}, Refuse("its table's length is out of range")
	}
	l := BodyLayout{DataAt: 4 + int(metaLen) + 4}
	l.pages = binary.LittleEndian.Uint32(body[l.DataAt-4:])
	l.count = binary.LittleEndian.Uint32(body[len(body)-4:])
	if have := int64(len(body) - l.DataAt - 4); int64(l.count)*(BlockSize+4) != have {
		return BodyLayout{}, Refuse("it declares %d memory blocks, which take %d bytes with their index, not the %d its body has for them",
			l.count, int64(l.count)*(BlockSize+4), have)
	}
	l.IndexAt = l.DataAt + int(l.count)*BlockSize
	return l, nil
}

// tableSum is the table check of a format-4 snapshot: head is its header
// up to its checks, body its body inflated.
func tableSum(head, body []byte, l BodyLayout) uint64 {
	var h xxh3.Hasher
	_, _ = h.Write(head)
	_, _ = h.Write(body[:l.DataAt])
	_, _ = h.Write(body[l.IndexAt:])
	return h.Sum64()
}

// checkTable refuses a format-4 snapshot whose table check is not want.
func checkTable(head, body []byte, l BodyLayout, want uint64) error {
	if got := tableSum(head, body, l); got != want {
		return Refuse("its header, table or index is corrupt: their checksum is %016x, its header says %016x", got, want)
	}
	return nil
}

// ParseBody4 reads the inflated body of a snapshot of format 4. check is
// given its layout once its lengths are read, and before anything in it
// is used (Decode's compares the table check); the blocks' data
// is checked as it is written (WriteBlocks).
func ParseBody4(img *Base, memoryBytes int64, body []byte, check func(BodyLayout) error) (*State, error) {
	l, err := Layout4(body)
	if err != nil {
		return nil, err
	}
	if err := check(l); err != nil {
		return nil, err
	}
	size := int64(l.pages) * abi.PageSize
	switch {
	case size < int64(len(img.Memory)):
		return nil, Refuse("its memory of %d bytes is smaller than the image's %d", size, len(img.Memory))
	case size > memoryBytes:
		return nil, Refuse("its memory of %d bytes is over the memory limit of %d bytes", size, memoryBytes)
	case int64(l.count) > size/BlockSize:
		return nil, Refuse("it has %d memory blocks, more than its %d bytes of memory hold", l.count, size)
	}
	st := &State{Pages: l.pages, Blocks: make([]uint32, l.count)}
	for i := range st.Blocks {
		v := binary.LittleEndian.Uint32(body[l.IndexAt+4*i:])
		if v >= uint32(size/BlockSize) || (i > 0 && v <= st.Blocks[i-1]) {
			return nil, Refuse("its memory block %d is out of order or outside memory", i)
		}
		st.Blocks[i] = v
	}
	if err := json.Unmarshal(body[4:l.DataAt-4], &st.Meta); err != nil {
		return nil, Refuse("its table is not valid: %v", err)
	}
	st.Data = body[l.DataAt:l.IndexAt]
	if err := st.Meta.Check(img, size); err != nil {
		return nil, err
	}
	return st, nil
}

// WriteBlocks writes a decoded snapshot's blocks with write (at a byte
// offset of the memory). A snapshot of format 4 has its blocks written one
// at a time, each hashed just after it is written, from the cache (copying
// first and hashing the block then was the fastest order measured, with
// the snapshot and the memory out of the cache: docs/performance-notebook.md), and
// its memory check compared once all are: one that fails it is refused
// (ErrRefused) with its blocks written, and the caller discards the
// memory. Older formats, checked already, have each run of consecutive
// blocks written at once.
func WriteBlocks(st *State, write func(off uint32, b []byte) bool) error {
	blocks, data := st.Blocks, st.Data
	if !st.CheckSums {
		for i := 0; i < len(blocks); {
			// A run of consecutive blocks is consecutive in the snapshot too.
			j := i + 1
			for j < len(blocks) && blocks[j] == blocks[j-1]+1 {
				j++
			}
			if !write(blocks[i]*BlockSize, data[i*BlockSize:j*BlockSize]) {
				return fmt.Errorf("wasmhost: write the snapshot's blocks %d to %d", blocks[i], blocks[j-1])
			}
			i = j
		}
		return nil
	}
	var sums xxh3.Hasher
	var sum [8]byte
	for i, b := range blocks {
		block := data[i*BlockSize : (i+1)*BlockSize]
		if !write(b*BlockSize, block) {
			return fmt.Errorf("wasmhost: write the snapshot's block %d", b)
		}
		binary.LittleEndian.PutUint64(sum[:], xxh3.Hash(block))
		_, _ = sums.Write(sum[:])
	}
	if got := sums.Sum64(); got != st.sums {
		return Refuse("its memory is corrupt: its blocks' checksum is %016x, its header says %016x", got, st.sums)
	}
	return nil
}

// Slack is what a new snapshot buffer is given past the snapshot
// it is made for, in bytes per byte: a later snapshot of the same program
// differs by its table's counters and clocks, a few bytes, and fits.
const Slack = 32

// NewBuffer returns a buffer of length 0 for a snapshot of size
// bytes, with a little room past it (Slack), rounded to blocks.
func NewBuffer(size int) []byte {
	n := size + size/Slack + BlockSize
	return make([]byte, 0, n-n%BlockSize)
}
