package wasmhost

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/xxh3"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// The snapshot of a suspended run, format version 4:
//
//	header (not compressed)
//	  magic      "PTCXSNAP"
//	  format     u16   snapshotFormat
//	  abi        u16   the guest ABI version (abi.ABIVersion)
//	  module     [32]  SHA-256 of the guest module
//	  image      [32]  SHA-256 of the initialised image's memory
//	  engine     u8 length, then the engine's name and version ("wazero v1.12.0")
//	  codec      u8    how the body is stored: codecStored (as is) or codecZstd
//	  raw        u64   the body's size (once inflated)
//	  table      u64   XXH3-64 of the header's bytes before it, then of the
//	                   body's bytes but the blocks' data, in their order
//	                   (meta, pages, index, blocks)
//	  memory     u64   XXH3-64 of the blocks' XXH3-64s (u64 each), in order
//	body: the bytes as they are (stored), or one zstd frame (its content size declared) of
//	  meta       u32 length, then JSON (snapshotMeta)
//	  pages      u32   the linear memory's size in wasm pages
//	  data       4 KiB × blocks
//	  index      u32 × blocks, ascending: the blocks' places in memory
//	  blocks     u32   how many blocks there are (the body's length must agree)
//
// Memory is stored as the blocks that differ from the image (a block past
// the image's end that is all zero is not stored): a resumed instance
// starts from the image, as every instance does, and the blocks are
// written over it. All integers are little-endian. A snapshot of another
// format, ABI, guest or image, or one that is corrupt, is refused with
// ErrSnapshot and a reason; nothing of it runs.
//
// The layout is made for one pass over memory each way, a 4 KiB block at a
// time while it is in the cache (docs/performance-notebook.md, "Fifth pass"): a
// suspension compares each block of the guest's memory with the image's,
// and one that differs is copied into the snapshot and hashed at once (the
// index, whose length is known only then, follows the data); a resume
// hashes each block as it writes it into the instance's memory. Everything
// but the blocks' data (header, meta, pages, index) is checked (the table
// check, and every field's range) before any memory is written; the data's
// check is compared once the blocks are written and before the run goes
// on, and a memory whose blocks fail it is discarded, never kept for
// another run. Any byte changed anywhere in a snapshot is refused: the
// table check covers the header as well (the engine's name, which is not
// compared, too). The checks are XXH3-64 (github.com/zeebo/xxh3, its
// one-shot hash vectorised; its streaming Hasher copies what it is given,
// so it hashes only the table and the blocks' 8-byte hashes). They are of
// the body inflated: a compressed snapshot (CompressSnapshot: several
// times smaller, and several milliseconds per megabyte to make, for a host
// that keeps it on disk or sends it away) is inflated to the stored body,
// which resumes as a stored one does; its zstd frame carries zstd's own
// checksum too.
//
// Formats 3 (the index before the data; one check, XXH3-64 of the body
// as it follows the header, inflated or not), 2 (as 3, the check a
// CRC-32C u32) and 1 (zstd, no codec byte, no check) are still read.

// snapshotFormat is the version of the layout above.
const snapshotFormat = 4

// snapshotFormatHash is the previous version: the index before the data,
// and one check, XXH3-64 of the body as stored.
const snapshotFormatHash = 3

// snapshotFormatCRC is the version before: as snapshotFormatHash, the
// check a u32, the CRC-32C (Castagnoli) of the body.
const snapshotFormatCRC = 2

// snapshotFormatZstd is the first version: no codec byte and no check, the
// body always a zstd frame.
const snapshotFormatZstd = 1

// How a snapshot's body is stored (its codec byte).
const (
	codecStored = 0
	codecZstd   = 1
)

const snapshotMagic = "PTCXSNAP"

// blockSize is the granularity of a snapshot's memory.
const blockSize = 4096

// headerSize is the size of the header before the engine's name.
const headerSize = len(snapshotMagic) + 2 + 2 + 32 + 32 + 1

// MaxSnapshotMetaBytes bounds the part of a snapshot that is not memory:
// the JSON of the run's table (the calls' arguments and answers, the logs,
// the timers). A run whose table is larger cannot be suspended ("the run
// could not be suspended: ..."), and a snapshot that declares more is
// refused before anything is inflated. The logs are at most the output
// limit (api.DefaultOutputBytes by default) and the arguments at most
// api.Limits.MaxInFlightArgBytes (api.DefaultMaxInFlightArgBytes); answers
// count too.
const MaxSnapshotMetaBytes = 64 << 20

// maxSnapshotMeta is the bound the code checks: MaxSnapshotMetaBytes,
// which the package's tests lower.
var maxSnapshotMeta = MaxSnapshotMetaBytes

// snapshotState is a snapshot once decoded: the run's table and its memory.
type snapshotState struct {
	meta   snapshotMeta
	memory []byte // whole: the image with the blocks written over it (decoded), or the guest's (encoding)
	pages  uint32
	blocks []uint32 // decoded: the blocks to write over the image
	data   []byte   // decoded: their bytes
	// sums is the memory check of a snapshot of format 4 (checkSums):
	// writeBlocks compares it as it writes the blocks.
	sums      uint64
	checkSums bool
	// recycle is the buffer of the snapshot decoded, when it was given to
	// the Runtime (Resumption.Recycle): kept once the blocks are written.
	recycle []byte
}

// snapshotMeta is the JSON part of a snapshot.
type snapshotMeta struct {
	Limits       api.Limits   `json:"limits"`
	Tools        []string     `json:"tools"`
	Compute      int64        `json:"compute"` // ns of compute used
	Wall         int64        `json:"wall"`    // ns of wall time elapsed
	Calls        int          `json:"calls"`
	RefusedCalls int          `json:"refusedCalls"`
	LastID       int32        `json:"lastID"`
	OutputUsed   int          `json:"outputUsed"`
	Logs         []string     `json:"logs"`
	Pending      []snapCall   `json:"pending"`
	Timers       snapTimers   `json:"timers"`
	World        world.State  `json:"world"`
	Globals      []snapGlobal `json:"globals"`
	BufPtr       uint32       `json:"bufPtr"`
	BufCap       uint32       `json:"bufCap"`
}

// snapCall is one call the program waits on.
type snapCall struct {
	ID         int32    `json:"id"`
	Name       string   `json:"name,omitempty"`
	Args       []byte   `json:"args,omitempty"`
	Size       int      `json:"size"` // its share of the arguments in flight
	Dispatched bool     `json:"dispatched,omitempty"`
	Answered   bool     `json:"answered,omitempty"`
	OK         bool     `json:"ok,omitempty"`
	Value      []byte   `json:"value,omitempty"`
	Message    string   `json:"message,omitempty"`
	Code       api.Code `json:"code,omitempty"`
}

type snapTimers struct {
	Last    int32       `json:"last"`
	Fired   int64       `json:"fired"` // the last deadline fired, ns from the run's start; 0: none
	Entries []snapTimer `json:"entries"`
}

type snapTimer struct {
	ID int32 `json:"id"`
	At int64 `json:"at"` // its deadline, ns from the run's start
}

type snapGlobal struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

// zstdWindow is the window of the zstd frames CompressSnapshot writes,
// and the most a frame Resume inflates may declare: what the decoder
// keeps while inflating, whatever the snapshot's size.
const zstdWindow = 1 << 20

var encoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(zstdWindow))
	if err != nil {
		panic(fmt.Sprintf("wasmhost: zstd encoder: %v", err)) // only for invalid options
	}
	return e
})

// appendHeader appends the header of a snapshot of format snapshotFormat
// (or snapshotFormatHash, for CompressSnapshot of one) to out, its checks
// left zero (seal and sealHash write them).
func appendHeader(out []byte, format uint16, module, memory []byte, engine string, codec byte, raw uint64) []byte {
	out = append(out, snapshotMagic...)
	out = binary.LittleEndian.AppendUint16(out, format)
	out = binary.LittleEndian.AppendUint16(out, abi.ABIVersion)
	out = append(out, module...)
	out = append(out, memory...)
	out = append(out, byte(len(engine)))
	out = append(out, engine...)
	out = append(out, codec)
	out = binary.LittleEndian.AppendUint64(out, raw)
	out = binary.LittleEndian.AppendUint64(out, 0)
	if format == snapshotFormat {
		out = binary.LittleEndian.AppendUint64(out, 0)
	}
	return out
}

// headerTail is the size of the header's fields after the engine's name
// (codec, raw, table, memory) in format snapshotFormat.
const headerTail = 1 + 8 + 8 + 8

// sealHash writes the check of the body of snapshot b (format
// snapshotFormatHash), which starts at bodyAt, into its header.
func sealHash(b []byte, bodyAt int) {
	binary.LittleEndian.PutUint64(b[bodyAt-8:], xxh3.Hash(b[bodyAt:]))
}

// castagnoli is the CRC-32C table, for the check of format 2.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is a snapshot's header, read by readHeader.
type header struct {
	format uint16
	abi    uint16
	module []byte // 32 bytes
	memory []byte // 32 bytes
	engine string
	codec  byte
	raw    uint64
	check  uint64 // formats 2 (a CRC-32C), 3 (XXH3-64) and 4 (the table check)
	sums   uint64 // format 4: the memory check
	head   []byte // format 4: the header's bytes the table check covers
	bodyAt int    // where the body starts
}

// readHeader reads the header of snapshot b, checking only its layout and,
// in formats 2 and 3, the check of the body that follows it.
func readHeader(b []byte) (header, error) {
	if len(b) < headerSize || string(b[:len(snapshotMagic)]) != snapshotMagic {
		return header{}, refuse("it is not a ptcx snapshot (no %q header)", snapshotMagic)
	}
	p := len(snapshotMagic)
	h := header{format: binary.LittleEndian.Uint16(b[p:]), abi: binary.LittleEndian.Uint16(b[p+2:])}
	if h.format < snapshotFormatZstd || h.format > snapshotFormat {
		return header{}, refuse("it has format version %d, this host reads versions %d to %d", h.format, snapshotFormatZstd, snapshotFormat)
	}
	p += 4
	h.module, h.memory = b[p:p+32], b[p+32:p+64]
	p += 64
	n := int(b[p])
	p++
	codecLen, checkLen := 1, 8
	switch h.format {
	case snapshotFormatZstd:
		codecLen, checkLen = 0, 0
	case snapshotFormatCRC:
		checkLen = 4
	case snapshotFormat:
		checkLen = 16
	}
	if len(b) < p+n+codecLen+8+checkLen {
		return header{}, refuse("its header is cut short")
	}
	h.engine = string(b[p : p+n])
	p += n
	h.codec = codecZstd
	if codecLen == 1 {
		h.codec = b[p]
		p++
		if h.codec != codecStored && h.codec != codecZstd {
			return header{}, refuse("its body's codec %d is unknown (this host reads %d, stored, and %d, zstd)", h.codec, codecStored, codecZstd)
		}
	}
	h.raw = binary.LittleEndian.Uint64(b[p:])
	p += 8
	switch checkLen {
	case 4:
		h.check = uint64(binary.LittleEndian.Uint32(b[p:]))
		p += 4
		if got := uint64(crc32.Checksum(b[p:], castagnoli)); got != h.check {
			return header{}, refuse("its body is corrupt: its checksum is %08x, its header says %08x", got, h.check)
		}
	case 8:
		h.check = binary.LittleEndian.Uint64(b[p:])
		p += 8
		if got := xxh3.Hash(b[p:]); got != h.check {
			return header{}, refuse("its body is corrupt: its checksum is %016x, its header says %016x", got, h.check)
		}
	case 16:
		// Checked with the body (parseBody4, writeBlocks): the body is
		// hashed a block at a time as it is used.
		h.head = b[:p]
		h.check, h.sums = binary.LittleEndian.Uint64(b[p:]), binary.LittleEndian.Uint64(b[p+8:])
		p += 16
	}
	h.bodyAt = p
	return h, nil
}

// CompressSnapshot returns snapshot compressed with zstd: what a host that
// keeps suspended runs on disk or sends them away stores, several times
// smaller than what a run suspends to (Suspended.Snapshot, whose body is
// stored as is, so that suspending and resuming take well under a
// millisecond). Runtime.Resume reads both. A snapshot already compressed
// is returned as it is; one that is not a snapshot (its header, its body's
// size) is refused with ErrSnapshot. It does not check that the snapshot
// can be resumed: Resume does.
func CompressSnapshot(snapshot []byte) ([]byte, error) {
	h, err := readHeader(snapshot)
	if err != nil {
		return nil, err
	}
	if h.codec == codecZstd {
		return snapshot, nil
	}
	body := snapshot[h.bodyAt:]
	if uint64(len(body)) != h.raw {
		return nil, refuse("its body is %d bytes, not the %d its header declares", len(body), h.raw)
	}
	if h.format != snapshotFormat {
		// Formats 2 and 3 have one body: compressed, it is format 3's.
		out := appendHeader(make([]byte, 0, h.bodyAt+len(body)/4), snapshotFormatHash, h.module, h.memory, h.engine, codecZstd, h.raw)
		bodyAt := len(out)
		out = encoder().EncodeAll(body, out)
		sealHash(out, bodyAt)
		return out, nil
	}
	l, err := layout4(body)
	if err != nil {
		return nil, err
	}
	if err := checkTable(h.head, body, l, h.check); err != nil {
		return nil, err
	}
	// The checks are of the body inflated: the memory's is kept, the
	// table's covers the header, whose codec changes.
	out := appendHeader(make([]byte, 0, h.bodyAt+len(body)/4), snapshotFormat, h.module, h.memory, h.engine, codecZstd, h.raw)
	bodyAt := len(out)
	out = encoder().EncodeAll(body, out)
	binary.LittleEndian.PutUint64(out[bodyAt-16:], tableSum(out[:bodyAt-16], body, l))
	binary.LittleEndian.PutUint64(out[bodyAt-8:], h.sums)
	return out, nil
}

// changedBlocks returns, ascending, the indices of the blocks of mem (whole
// pages, starting with the image) that differ from img within it, or are
// not all zero past it: what a snapshot stores. (Reading only the pages
// the page table says may hold a private copy, as a reset does, was tried:
// a suspended heap's pages are nearly all written, and reading
// /proc/self/pagemap cost more than it saved: docs/performance-notebook.md.)
func changedBlocks(mem, img []byte) []uint32 {
	var index []uint32
	for off := 0; off < len(mem); off += blockSize {
		if stored(mem, img, off) {
			index = append(index, uint32(off/blockSize))
		}
	}
	return index
}

// stored reports whether a snapshot of mem stores its block at off: the
// block differs from img's there, or, past img, is not all zero.
func stored(mem, img []byte, off int) bool {
	block := mem[off : off+blockSize]
	if off < len(img) {
		return !bytes.Equal(block, img[off:off+blockSize])
	}
	return !allZero(block)
}

var zeroBlock [blockSize]byte

func allZero(b []byte) bool { return bytes.Equal(b, zeroBlock[:]) }

// decoders are pools of streaming zstd decoders, by the most they inflate:
// one pool per bound, so per Runtime. A snapshot is inflated as a stream,
// so what it costs is what it really inflates to, never what it declares.
var decoders sync.Map // int64 -> *sync.Pool of *zstd.Decoder

func decoderPool(bound int64) *sync.Pool {
	if p, ok := decoders.Load(bound); ok {
		return p.(*sync.Pool)
	}
	p, _ := decoders.LoadOrStore(bound, &sync.Pool{New: func() any {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(bound)),
			zstd.WithDecoderMaxWindow(zstdWindow))
		if err != nil {
			return err
		}
		return d
	}})
	return p.(*sync.Pool)
}

// inflate decodes the zstd frame in, which must inflate to exactly raw
// bytes, reading at most one byte past them.
func inflate(in []byte, raw uint64, bound int64) ([]byte, error) {
	pool := decoderPool(bound)
	v := pool.Get()
	dec, ok := v.(*zstd.Decoder)
	if !ok {
		return nil, fmt.Errorf("wasmhost: zstd decoder: %v", v)
	}
	defer pool.Put(dec)
	if err := dec.Reset(bytes.NewReader(in)); err != nil {
		return nil, refuse("its body cannot be inflated: %v", err)
	}
	defer dec.Reset(nil)
	// The buffer grows with what the frame really inflates to: a size
	// taken from the header alone would cost its declared bytes for any
	// few bytes that claim them.
	var buf bytes.Buffer
	buf.Grow(int(min(raw, uint64(max(64<<10, 4*len(in))))))
	n, err := buf.ReadFrom(io.LimitReader(dec, int64(raw)+1))
	if err != nil {
		return nil, refuse("its body cannot be inflated: %v", err)
	}
	if uint64(n) != raw {
		return nil, refuse("its body cannot be inflated to the %d bytes its header declares (it gives %d)", raw, n)
	}
	return buf.Bytes(), nil
}

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSnapshot, fmt.Sprintf(format, args...))
}

// maxInflated is the most a snapshot resumed within memoryBytes of memory
// may inflate to.
func maxInflated(memoryBytes int64) int64 {
	blocks := memoryBytes / blockSize
	return 4 + int64(maxSnapshotMeta) + 8 + blocks*(4+blockSize)
}

// decodeSnapshot reads a snapshot for img, whose memory may be at most
// memoryBytes. It never panics: every size and every field is checked.
func decodeSnapshot(img *image, memoryBytes int64, b []byte) (*snapshotState, error) {
	h, err := readHeader(b)
	if err != nil {
		return nil, err
	}
	if h.abi != abi.ABIVersion {
		return nil, refuse("it was made with guest ABI version %d, this host speaks version %d", h.abi, abi.ABIVersion)
	}
	if !bytes.Equal(h.module, img.moduleHash[:]) {
		return nil, refuse("it was made by guest module %x, this Runtime runs %x: resume it with the guest that suspended it",
			h.module[:8], img.moduleHash[:8])
	}
	if !bytes.Equal(h.memory, img.memoryHash[:]) {
		return nil, refuse("it was made from initialised image %x, this Runtime's is %x (the same guest initialised differently)",
			h.memory[:8], img.memoryHash[:8])
	}
	// The engine is recorded, not checked: the state is the module's,
	// whatever ran it.
	raw, p := h.raw, h.bodyAt
	bound := maxInflated(memoryBytes)
	if raw > uint64(bound) {
		return nil, refuse("it declares %d bytes inflated, over the %d a snapshot of a run within %d bytes of memory may hold",
			raw, bound, memoryBytes)
	}
	body := b[p:]
	if h.codec == codecStored {
		if uint64(len(body)) != raw {
			return nil, refuse("its body is %d bytes, not the %d its header declares", len(body), raw)
		}
	} else if body, err = inflateBody(b[p:], raw, bound); err != nil {
		return nil, err
	}
	if h.format != snapshotFormat {
		return parseBody(img, memoryBytes, body)
	}
	st, err := parseBody4(img, memoryBytes, body, func(l bodyLayout) error { return checkTable(h.head, body, l, h.check) })
	if err != nil {
		return nil, err
	}
	st.sums, st.checkSums = h.sums, true
	return st, nil
}

// inflateBody inflates the zstd frame of a snapshot's body, which must
// declare raw bytes, within a window of zstdWindow and at most bound.
func inflateBody(frame []byte, raw uint64, bound int64) ([]byte, error) {
	var zh zstd.Header
	if err := zh.Decode(frame); err != nil {
		return nil, refuse("its body is not a zstd frame: %v", err)
	}
	if !zh.HasFCS || zh.FrameContentSize != raw {
		return nil, refuse("its body does not declare the %d bytes its header does", raw)
	}
	window := zh.WindowSize
	if zh.SingleSegment {
		window = zh.FrameContentSize // the whole frame is the window
	}
	if window > zstdWindow {
		return nil, refuse("its body's zstd window of %d bytes is over the %d a snapshot's may be", window, zstdWindow)
	}
	return inflate(frame, raw, bound)
}

// parseBody reads the inflated body of a snapshot of formats 1 to 3,
// whose check readHeader made.
func parseBody(img *image, memoryBytes int64, body []byte) (*snapshotState, error) {
	u32 := func(at int) (uint32, bool) {
		if at < 0 || at+4 > len(body) {
			return 0, false
		}
		return binary.LittleEndian.Uint32(body[at:]), true
	}
	metaLen, ok := u32(0)
	if !ok || int64(metaLen) > int64(maxSnapshotMeta) || int64(metaLen)+12 > int64(len(body)) {
		return nil, refuse("its table's length is out of range")
	}
	st := &snapshotState{}
	if err := json.Unmarshal(body[4:4+metaLen], &st.meta); err != nil {
		return nil, refuse("its table is not valid: %v", err)
	}
	p := 4 + int(metaLen)
	pages, _ := u32(p)
	count, _ := u32(p + 4)
	p += 8
	size := int64(pages) * abi.PageSize
	switch {
	case size < int64(len(img.memory)):
		return nil, refuse("its memory of %d bytes is smaller than the image's %d", size, len(img.memory))
	case size > memoryBytes:
		return nil, refuse("its memory of %d bytes is over the memory limit of %d bytes", size, memoryBytes)
	case int64(count) > size/blockSize:
		return nil, refuse("it has %d memory blocks, more than its %d bytes of memory hold", count, size)
	case int64(len(body)) != int64(p)+int64(count)*(4+blockSize):
		return nil, refuse("its memory blocks take %d bytes, not the %d its index says", len(body)-p, int64(count)*(4+blockSize))
	}
	st.pages = pages
	st.blocks = make([]uint32, count)
	for i := range st.blocks {
		v, _ := u32(p + 4*i)
		if v >= uint32(size/blockSize) || (i > 0 && v <= st.blocks[i-1]) {
			return nil, refuse("its memory block %d is out of order or outside memory", i)
		}
		st.blocks[i] = v
	}
	st.data = body[p+4*int(count):]
	if err := st.meta.check(img, size); err != nil {
		return nil, err
	}
	return st, nil
}
