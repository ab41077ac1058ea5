// Package snapshot is the format of a suspended run's snapshot: encoding a
// run's table and memory against the image (Encode), decoding and checking
// one (Decode, Meta.Check), writing its blocks into an instance's memory
// (WriteBlocks), compressing it (Compress) and reading its table alone
// (Calls). wasmhost's suspend and resume build and adopt the State.
//
// The snapshot of a suspended run, format version 4:
//
//	header (not compressed)
//	  magic      "PTCXSNAP"
//	  format     u16   Format
//	  abi        u16   the guest ABI version (abi.ABIVersion)
//	  module     [32]  SHA-256 of the guest module
//	  image      [32]  SHA-256 of the initialised image's memory
//	  engine     u8 length, then the engine's name and version ("wazero v1.12.0")
//	  codec      u8    how the body is stored: CodecStored (as is) or CodecZstd
//	  raw        u64   the body's size (once inflated)
//	  table      u64   XXH3-64 of the header's bytes before it, then of the
//	                   body's bytes but the blocks' data, in their order
//	                   (meta, pages, index, blocks)
//	  memory     u64   XXH3-64 of the blocks' XXH3-64s (u64 each), in order
//	body: the bytes as they are (stored), or one zstd frame (its content size declared) of
//	  meta       u32 length, then JSON (Meta)
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
// ErrRefused and a reason; nothing of it runs.
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
// the body inflated: a compressed snapshot (Compress: several
// times smaller, and several milliseconds per megabyte to make, for a host
// that keeps it on disk or sends it away) is inflated to the stored body,
// which resumes as a stored one does; its zstd frame carries zstd's own
// checksum too.
//
// Formats 3 (the index before the data; one check, XXH3-64 of the body
// as it follows the header, inflated or not), 2 (as 3, the check a
// CRC-32C u32) and 1 (zstd, no codec byte, no check) are still read.
package snapshot

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/xxh3"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/wasifs"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// Format is the version of the layout above.
const Format = 4

// FormatHash is the previous version: the index before the data,
// and one check, XXH3-64 of the body as stored.
const FormatHash = 3

// FormatCRC is the version before: as FormatHash, the
// check a u32, the CRC-32C (Castagnoli) of the body.
const FormatCRC = 2

// FormatZstd is the first version: no codec byte and no check, the
// body always a zstd frame.
const FormatZstd = 1

// How a snapshot's body is stored (its codec byte).
const (
	CodecStored = 0
	CodecZstd   = 1
)

const Magic = "PTCXSNAP"

// BlockSize is the granularity of a snapshot's memory.
const BlockSize = 4096

// HeaderSize is the size of the header before the engine's name.
const HeaderSize = len(Magic) + 2 + 2 + 32 + 32 + 1

// MaxMetaBytes is wasmhost.MaxSnapshotMetaBytes: the bound on the part of
// a snapshot that is not memory.
const MaxMetaBytes = 64 << 20

// maxMeta is the bound the code checks: MaxMetaBytes, which wasmhost's
// tests lower (SetMaxMeta).
var maxMeta = MaxMetaBytes

// SetMaxMeta sets the bound the code checks to n, for tests (of this
// package and of wasmhost): nothing else calls it.
func SetMaxMeta(n int) { maxMeta = n }

// ErrRefused is wasmhost.ErrSnapshot: a snapshot that cannot be resumed
// (another format, ABI version, guest or image, or corrupt bytes) is
// refused with it and a reason.
var ErrRefused = errors.New("wasmhost: the snapshot cannot be resumed")

// Base is what a snapshot is made against and checked against: the
// guest and its initialised image.
type Base struct {
	// ModuleHash and MemoryHash are the SHA-256 of the guest module and
	// of the image's memory.
	ModuleHash, MemoryHash [32]byte
	// Engine is the engine's name and version.
	Engine string
	// Memory is the image's linear memory, whole pages.
	Memory []byte
	// Globals names the exported mutable globals a snapshot carries.
	Globals []string
}

// State is a snapshot once decoded: the run's table and its memory.
type State struct {
	Meta   Meta
	Memory []byte // whole: the image with the blocks written over it (decoded), or the guest's (encoding)
	Pages  uint32
	Blocks []uint32 // decoded: the blocks to write over the image
	Data   []byte   // decoded: their bytes
	// sums is the memory check of a snapshot of format 4 (CheckSums):
	// WriteBlocks compares it as it writes the blocks.
	sums      uint64
	CheckSums bool
	// recycle is the buffer of the snapshot decoded, when it was given to
	// the Runtime (Resumption.Recycle): kept once the blocks are written.
	Recycle []byte
}

// Meta is the JSON part of a snapshot.
type Meta struct {
	Limits       api.Limits  `json:"limits"`
	Tools        []string    `json:"tools"`
	Compute      int64       `json:"compute"` // ns of compute used
	Wall         int64       `json:"wall"`    // ns of wall time elapsed
	Calls        int         `json:"calls"`
	RefusedCalls int         `json:"refusedCalls"`
	LastID       int32       `json:"lastID"`
	OutputUsed   int         `json:"outputUsed"`
	Logs         []string    `json:"logs"`
	Pending      []Call      `json:"pending"`
	Timers       Timers      `json:"timers"`
	World        world.State `json:"world"`
	Globals      []Global    `json:"globals"`
	BufPtr       uint32      `json:"bufPtr"`
	BufCap       uint32      `json:"bufCap"`
	// Files are the files the guest has open (the Python guest's:
	// engine.FileTable), opened again before the run resumes; none for
	// the QuickJS guest, and in snapshots made before they were carried.
	Files []wasifs.File `json:"files,omitempty"`
}

// Call is one call the program waits on.
type Call struct {
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
	Handle     bool     `json:"handle,omitempty"` // the answer is a handle's envelope (CallResult.Handle)
}

type Timers struct {
	Last    int32   `json:"last"`
	Fired   int64   `json:"fired"` // the last deadline fired, ns from the run's start; 0: none
	Entries []Timer `json:"entries"`
}

type Timer struct {
	ID int32 `json:"id"`
	At int64 `json:"at"` // its deadline, ns from the run's start
}

type Global struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

// ZstdWindow is the window of the zstd frames Compress writes,
// and the most a frame Resume inflates may declare: what the decoder
// keeps while inflating, whatever the snapshot's size.
const ZstdWindow = 1 << 20

var Encoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(ZstdWindow))
	if err != nil {
		panic(fmt.Sprintf("wasmhost: zstd encoder: %v", err)) // only for invalid options
	}
	return e
})

// AppendHeader appends the header of a snapshot of format Format
// (or FormatHash, for Compress of one) to out, its checks
// left zero (seal and SealHash write them).
func AppendHeader(out []byte, format uint16, module, memory []byte, engine string, codec byte, raw uint64) []byte {
	out = append(out, Magic...)
	out = binary.LittleEndian.AppendUint16(out, format)
	out = binary.LittleEndian.AppendUint16(out, abi.ABIVersion)
	out = append(out, module...)
	out = append(out, memory...)
	out = append(out, byte(len(engine)))
	out = append(out, engine...)
	out = append(out, codec)
	out = binary.LittleEndian.AppendUint64(out, raw)
	out = binary.LittleEndian.AppendUint64(out, 0)
	if format == Format {
		out = binary.LittleEndian.AppendUint64(out, 0)
	}
	return out
}

// HeaderTail is the size of the header's fields after the engine's name
// (codec, raw, table, memory) in format Format.
const HeaderTail = 1 + 8 + 8 + 8

// SealHash writes the check of the body of snapshot b (format
// FormatHash), which starts at bodyAt, into its header.
func SealHash(b []byte, bodyAt int) {
	binary.LittleEndian.PutUint64(b[bodyAt-8:], xxh3.Hash(b[bodyAt:]))
}

// Castagnoli is the CRC-32C table, for the check of format 2.
var Castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is a snapshot's header, read by ReadHeader.
type Header struct {
	Format uint16
	abi    uint16
	module []byte // 32 bytes
	memory []byte // 32 bytes
	engine string
	Codec  byte
	Raw    uint64
	check  uint64 // formats 2 (a CRC-32C), 3 (XXH3-64) and 4 (the table check)
	sums   uint64 // format 4: the memory check
	head   []byte // format 4: the header's bytes the table check covers
	BodyAt int    // where the body starts
}

// ReadHeader reads the header of snapshot b, checking only its layout and,
// in formats 2 and 3, the check of the body that follows it.
func ReadHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize || string(b[:len(Magic)]) != Magic {
		return Header{}, Refuse("it is not a ptcx snapshot (no %q header)", Magic)
	}
	p := len(Magic)
	h := Header{Format: binary.LittleEndian.Uint16(b[p:]), abi: binary.LittleEndian.Uint16(b[p+2:])}
	if h.Format < FormatZstd || h.Format > Format {
		return Header{}, Refuse("it has format version %d, this host reads versions %d to %d", h.Format, FormatZstd, Format)
	}
	p += 4
	h.module, h.memory = b[p:p+32], b[p+32:p+64]
	p += 64
	n := int(b[p])
	p++
	codecLen, checkLen := 1, 8
	switch h.Format {
	case FormatZstd:
		codecLen, checkLen = 0, 0
	case FormatCRC:
		checkLen = 4
	case Format:
		checkLen = 16
	}
	if len(b) < p+n+codecLen+8+checkLen {
		return Header{}, Refuse("its header is cut short")
	}
	h.engine = string(b[p : p+n])
	p += n
	h.Codec = CodecZstd
	if codecLen == 1 {
		h.Codec = b[p]
		p++
		if h.Codec != CodecStored && h.Codec != CodecZstd {
			return Header{}, Refuse("its body's codec %d is unknown (this host reads %d, stored, and %d, zstd)", h.Codec, CodecStored, CodecZstd)
		}
	}
	h.Raw = binary.LittleEndian.Uint64(b[p:])
	p += 8
	switch checkLen {
	case 4:
		h.check = uint64(binary.LittleEndian.Uint32(b[p:]))
		p += 4
		if got := uint64(crc32.Checksum(b[p:], Castagnoli)); got != h.check {
			return Header{}, Refuse("its body is corrupt: its checksum is %08x, its header says %08x", got, h.check)
		}
	case 8:
		h.check = binary.LittleEndian.Uint64(b[p:])
		p += 8
		if got := xxh3.Hash(b[p:]); got != h.check {
			return Header{}, Refuse("its body is corrupt: its checksum is %016x, its header says %016x", got, h.check)
		}
	case 16:
		// Checked with the body (ParseBody4, WriteBlocks): the body is
		// hashed a block at a time as it is used.
		h.head = b[:p]
		h.check, h.sums = binary.LittleEndian.Uint64(b[p:]), binary.LittleEndian.Uint64(b[p+8:])
		p += 16
	}
	h.BodyAt = p
	return h, nil
}

// Compress is wasmhost.CompressSnapshot.
func Compress(snapshot []byte) ([]byte, error) {
	h, err := ReadHeader(snapshot)
	if err != nil {
		return nil, err
	}
	if h.Codec == CodecZstd {
		return snapshot, nil
	}
	body := snapshot[h.BodyAt:]
	if uint64(len(body)) != h.Raw {
		return nil, Refuse("its body is %d bytes, not the %d its header declares", len(body), h.Raw)
	}
	if h.Format != Format {
		// Formats 2 and 3 have one body: compressed, it is format 3's.
		out := AppendHeader(make([]byte, 0, h.BodyAt+len(body)/4), FormatHash, h.module, h.memory, h.engine, CodecZstd, h.Raw)
		bodyAt := len(out)
		out = Encoder().EncodeAll(body, out)
		SealHash(out, bodyAt)
		return out, nil
	}
	l, err := Layout4(body)
	if err != nil {
		return nil, err
	}
	if err := checkTable(h.head, body, l, h.check); err != nil {
		return nil, err
	}
	// The checks are of the body inflated: the memory's is kept, the
	// table's covers the header, whose codec changes.
	out := AppendHeader(make([]byte, 0, h.BodyAt+len(body)/4), Format, h.module, h.memory, h.engine, CodecZstd, h.Raw)
	bodyAt := len(out)
	out = Encoder().EncodeAll(body, out)
	binary.LittleEndian.PutUint64(out[bodyAt-16:], tableSum(out[:bodyAt-16], body, l))
	binary.LittleEndian.PutUint64(out[bodyAt-8:], h.sums)
	return out, nil
}

// ChangedBlocks returns, ascending, the indices of the blocks of mem (whole
// pages, starting with the image) that differ from img within it, or are
// not all zero past it: what a snapshot stores. (Reading only the pages
// the page table says may hold a private copy, as a reset does, was tried:
// a suspended heap's pages are nearly all written, and reading
// /proc/self/pagemap cost more than it saved: docs/performance-notebook.md.)
func ChangedBlocks(mem, img []byte) []uint32 {
	var index []uint32
	for off := 0; off < len(mem); off += BlockSize {
		if Stored(mem, img, off) {
			index = append(index, uint32(off/BlockSize))
		}
	}
	return index
}

// stored reports whether a snapshot of mem stores its block at off: the
// block differs from img's there, or, past img, is not all zero.
func Stored(mem, img []byte, off int) bool {
	block := mem[off : off+BlockSize]
	if off < len(img) {
		return !bytes.Equal(block, img[off:off+BlockSize])
	}
	return !AllZero(block)
}

var zeroBlock [BlockSize]byte

func AllZero(b []byte) bool { return bytes.Equal(b, zeroBlock[:]) }

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
			zstd.WithDecoderMaxWindow(ZstdWindow))
		if err != nil {
			return err
		}
		return d
	}})
	return p.(*sync.Pool)
}

// inflate decodes the zstd frame in, which must inflate to exactly raw
// bytes, reading at most one byte past them.
func Inflate(in []byte, raw uint64, bound int64) ([]byte, error) {
	pool := decoderPool(bound)
	v := pool.Get()
	dec, ok := v.(*zstd.Decoder)
	if !ok {
		return nil, fmt.Errorf("wasmhost: zstd decoder: %v", v)
	}
	defer pool.Put(dec)
	if err := dec.Reset(bytes.NewReader(in)); err != nil {
		return nil, Refuse("its body cannot be inflated: %v", err)
	}
	defer dec.Reset(nil)
	// The buffer grows with what the frame really inflates to: a size
	// taken from the header alone would cost its declared bytes for any
	// few bytes that claim them.
	var buf bytes.Buffer
	buf.Grow(int(min(raw, uint64(max(64<<10, 4*len(in))))))
	n, err := buf.ReadFrom(io.LimitReader(dec, int64(raw)+1))
	if err != nil {
		return nil, Refuse("its body cannot be inflated: %v", err)
	}
	if uint64(n) != raw {
		return nil, Refuse("its body cannot be inflated to the %d bytes its header declares (it gives %d)", raw, n)
	}
	return buf.Bytes(), nil
}

func Refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// MaxInflated is the most a snapshot resumed within memoryBytes of memory
// may inflate to.
func MaxInflated(memoryBytes int64) int64 {
	blocks := memoryBytes / BlockSize
	return 4 + int64(maxMeta) + 8 + blocks*(4+BlockSize)
}

// Decode reads a snapshot for img, whose memory may be at most
// memoryBytes. It never panics: every size and every field is checked.
func Decode(img *Base, memoryBytes int64, b []byte) (*State, error) {
	h, err := ReadHeader(b)
	if err != nil {
		return nil, err
	}
	if h.abi != abi.ABIVersion {
		return nil, Refuse("it was made with guest ABI version %d, this host speaks version %d", h.abi, abi.ABIVersion)
	}
	if !bytes.Equal(h.module, img.ModuleHash[:]) {
		return nil, Refuse("it was made by guest module %x, this Runtime runs %x: resume it with the guest that suspended it",
			h.module[:8], img.ModuleHash[:8])
	}
	if !bytes.Equal(h.memory, img.MemoryHash[:]) {
		return nil, Refuse("it was made from initialised image %x, this Runtime's is %x (the same guest initialised differently)",
			h.memory[:8], img.MemoryHash[:8])
	}
	// The engine is recorded, not checked: the state is the module's,
	// whatever ran it.
	raw, p := h.Raw, h.BodyAt
	bound := MaxInflated(memoryBytes)
	if raw > uint64(bound) {
		return nil, Refuse("it declares %d bytes inflated, over the %d a snapshot of a run within %d bytes of memory may hold",
			raw, bound, memoryBytes)
	}
	body := b[p:]
	if h.Codec == CodecStored {
		if uint64(len(body)) != raw {
			return nil, Refuse("its body is %d bytes, not the %d its header declares", len(body), raw)
		}
	} else if body, err = inflateBody(b[p:], raw, bound); err != nil {
		return nil, err
	}
	if h.Format != Format {
		return ParseBody(img, memoryBytes, body)
	}
	st, err := ParseBody4(img, memoryBytes, body, func(l BodyLayout) error { return checkTable(h.head, body, l, h.check) })
	if err != nil {
		return nil, err
	}
	st.sums, st.CheckSums = h.sums, true
	return st, nil
}

// inflateBody inflates the zstd frame of a snapshot's body, which must
// declare raw bytes, within a window of ZstdWindow and at most bound.
func inflateBody(frame []byte, raw uint64, bound int64) ([]byte, error) {
	var zh zstd.Header
	if err := zh.Decode(frame); err != nil {
		return nil, Refuse("its body is not a zstd frame: %v", err)
	}
	if !zh.HasFCS || zh.FrameContentSize != raw {
		return nil, Refuse("its body does not declare the %d bytes its header does", raw)
	}
	window := zh.WindowSize
	if zh.SingleSegment {
		window = zh.FrameContentSize // the whole frame is the window
	}
	if window > ZstdWindow {
		return nil, Refuse("its body's zstd window of %d bytes is over the %d a snapshot's may be", window, ZstdWindow)
	}
	return Inflate(frame, raw, bound)
}

// ParseBody reads the inflated body of a snapshot of formats 1 to 3,
// whose check ReadHeader made.
func ParseBody(img *Base, memoryBytes int64, body []byte) (*State, error) {
	u32 := func(at int) (uint32, bool) {
		if at < 0 || at+4 > len(body) {
			return 0, false
		}
		return binary.LittleEndian.Uint32(body[at:]), true
	}
	metaLen, ok := u32(0)
	if !ok || int64(metaLen) > int64(maxMeta) || int64(metaLen)+12 > int64(len(body)) {
		return nil, Refuse("its table's length is out of range")
	}
	st := &State{}
	if err := json.Unmarshal(body[4:4+metaLen], &st.Meta); err != nil {
		return nil, Refuse("its table is not valid: %v", err)
	}
	p := 4 + int(metaLen)
	pages, _ := u32(p)
	count, _ := u32(p + 4)
	p += 8
	size := int64(pages) * abi.PageSize
	switch {
	case size < int64(len(img.Memory)):
		return nil, Refuse("its memory of %d bytes is smaller than the image's %d", size, len(img.Memory))
	case size > memoryBytes:
		return nil, Refuse("its memory of %d bytes is over the memory limit of %d bytes", size, memoryBytes)
	case int64(count) > size/BlockSize:
		return nil, Refuse("it has %d memory blocks, more than its %d bytes of memory hold", count, size)
	case int64(len(body)) != int64(p)+int64(count)*(4+BlockSize):
		return nil, Refuse("its memory blocks take %d bytes, not the %d its index says", len(body)-p, int64(count)*(4+BlockSize))
	}
	st.Pages = pages
	st.Blocks = make([]uint32, count)
	for i := range st.Blocks {
		v, _ := u32(p + 4*i)
		if v >= uint32(size/BlockSize) || (i > 0 && v <= st.Blocks[i-1]) {
			return nil, Refuse("its memory block %d is out of order or outside memory", i)
		}
		st.Blocks[i] = v
	}
	st.Data = body[p+4*int(count):]
	if err := st.Meta.Check(img, size); err != nil {
		return nil, err
	}
	return st, nil
}

// ModuleOf returns the SHA-256 of the guest module that made b, bytes of a
// snapshot or of a session, as their header says, or nil when b has
// neither header (nothing else is checked): which of a host's guests, and
// so which language's Runtime, should decode them.
func ModuleOf(b []byte) []byte {
	switch {
	case len(b) >= HeaderSize && string(b[:len(Magic)]) == Magic:
		return b[len(Magic)+4 : len(Magic)+4+32]
	case len(b) >= SessionHeaderSize && string(b[:len(SessionMagic)]) == SessionMagic:
		return b[len(SessionMagic)+4 : len(SessionMagic)+4+32]
	}
	return nil
}
