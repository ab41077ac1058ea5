package snapshot

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/wasifs"
)

// ErrSession is wasmhost.ErrSessionBytes: a session's bytes that cannot be
// restored are refused with it and a reason.
var ErrSession = errors.New("wasmhost: the session's bytes cannot be restored")

// A session suspended to bytes, format version 1 or 2. A session between runs
// has no program, so its state is the guest's alone: no calls, timers,
// logs or counters (those are per run), unlike a suspended run's snapshot
// (snapshot.go), whose layout this follows:
//
//	header (not compressed)
//	  magic      "PTCXSESS"
//	  format     u16   sessionFormat
//	  abi        u16   the guest ABI version (abi.ABIVersion)
//	  module     [32]  SHA-256 of the guest module
//	  image      [32]  SHA-256 of the initialised image's memory
//	  raw        u64   the body's size once inflated
//	body: one zstd frame (its content size declared) of
//	  files      (format 2 only) u32 length, then that many bytes: the JSON of
//	             the files the guest has open ([]wasifs.File: the Python guest's,
//	             at most wasifs.MaxOpen); format 1 when it has none
//	  globals    u32 count, then u64 × count: the guest's mutable globals, in the image's order
//	  buffer     u32 address, u32 capacity: the guest's exchange buffer
//	  pages      u32   the linear memory's size in wasm pages
//	  blocks     u32   how many 4 KiB blocks follow
//	  index      u32 × blocks, ascending: the blocks' places in memory
//	  data       4 KiB × blocks
//
// Memory is stored as the blocks that differ from the image, as in a
// snapshot. The bytes never leave the host that made them (the Session
// holds them), but they are decoded as untrusted all the same: every size
// is checked, and bytes of another format, guest or image are refused with
// wasmhost.ErrSessionBytes.

const SessionMagic = "PTCXSESS"

// sessionFormat is the format written when the guest has no file open
// (every QuickJS session, most Python ones), which hosts before format 2
// read; sessionFormatFiles when it has.
const (
	sessionFormat      = 1
	sessionFormatFiles = 2
)

// maxSessionFilesBytes bounds the JSON of a session's open files:
// wasifs.MaxOpen entries of a path up to 4 KiB and their numbers.
const maxSessionFilesBytes = wasifs.MaxOpen * (4096 + 128)

const SessionHeaderSize = len(SessionMagic) + 2 + 2 + 32 + 32 + 8

func refuseSession(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSession, fmt.Sprintf(format, args...))
}

// Session is a session's bytes once decoded.
type Session struct {
	Globals        []uint64
	BufPtr, BufCap uint32
	Pages          uint32
	Blocks         []uint32
	Data           []byte
	// Files are the files the guest had open (format 2), to be reopened
	// in the restored instance's file table (which checks each).
	Files []wasifs.File
}

var sessionEncoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(1<<20))
	if err != nil {
		panic(fmt.Sprintf("wasmhost: zstd encoder: %v", err)) // only for invalid options
	}
	return e
})

// EncodeSession encodes a session's state: its memory (whole pages, at
// least the image's), its globals (in the image's order), its exchange
// buffer and the files its guest has open (none: format 1).
func EncodeSession(img *Base, mem []byte, globals []uint64, bufPtr, bufCap uint32, files []wasifs.File) ([]byte, error) {
	format, body := uint16(sessionFormat), []byte(nil)
	if len(files) > 0 {
		if len(files) > wasifs.MaxOpen {
			return nil, fmt.Errorf("wasmhost: the session has %d open files, over the limit of %d", len(files), wasifs.MaxOpen)
		}
		js, err := json.Marshal(files)
		if err != nil || len(js) > maxSessionFilesBytes {
			return nil, fmt.Errorf("wasmhost: the session's open files cannot be encoded (%d bytes, %v)", len(js), err)
		}
		format = sessionFormatFiles
		body = binary.LittleEndian.AppendUint32(body, uint32(len(js)))
		body = append(body, js...)
	}
	body = binary.LittleEndian.AppendUint32(body, uint32(len(globals)))
	for _, g := range globals {
		body = binary.LittleEndian.AppendUint64(body, g)
	}
	body = binary.LittleEndian.AppendUint32(body, bufPtr)
	body = binary.LittleEndian.AppendUint32(body, bufCap)
	index := ChangedBlocks(mem, img.Memory)
	body = binary.LittleEndian.AppendUint32(body, uint32(len(mem)/abi.PageSize))
	body = binary.LittleEndian.AppendUint32(body, uint32(len(index)))
	for _, i := range index {
		body = binary.LittleEndian.AppendUint32(body, i)
	}
	for _, i := range index {
		body = append(body, mem[int(i)*BlockSize:int(i+1)*BlockSize]...)
	}
	out := make([]byte, 0, SessionHeaderSize+len(body)/4)
	out = append(out, SessionMagic...)
	out = binary.LittleEndian.AppendUint16(out, format)
	out = binary.LittleEndian.AppendUint16(out, abi.ABIVersion)
	out = append(out, img.ModuleHash[:]...)
	out = append(out, img.MemoryHash[:]...)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(body)))
	return sessionEncoder().EncodeAll(body, out), nil
}

// DecodeSession reads a session's bytes for img, within memoryBytes of
// memory. It never panics: every size is checked.
func DecodeSession(img *Base, memoryBytes int64, b []byte) (*Session, error) {
	if len(b) < SessionHeaderSize || string(b[:len(SessionMagic)]) != SessionMagic {
		return nil, refuseSession("they are not a ptcx session (no %q header)", SessionMagic)
	}
	p := len(SessionMagic)
	format := binary.LittleEndian.Uint16(b[p:])
	if format != sessionFormat && format != sessionFormatFiles {
		return nil, refuseSession("they have format version %d, this host reads versions %d and %d", format, sessionFormat, sessionFormatFiles)
	}
	if v := binary.LittleEndian.Uint16(b[p+2:]); v != abi.ABIVersion {
		return nil, refuseSession("they were made with guest ABI version %d, this host speaks version %d", v, abi.ABIVersion)
	}
	p += 4
	if !bytes.Equal(b[p:p+32], img.ModuleHash[:]) || !bytes.Equal(b[p+32:p+64], img.MemoryHash[:]) {
		return nil, refuseSession("they were made by another guest or initialised image")
	}
	p += 64
	raw := binary.LittleEndian.Uint64(b[p:])
	p += 8
	globals := int64(len(img.Globals))
	bound := 4 + 8*globals + 16 + (memoryBytes/BlockSize)*(4+BlockSize)
	if format == sessionFormatFiles {
		bound += 4 + maxSessionFilesBytes
	}
	if raw > uint64(bound) {
		return nil, refuseSession("they declare %d bytes inflated, over the %d a session within %d bytes of memory may hold", raw, bound, memoryBytes)
	}
	var h zstd.Header
	if err := h.Decode(b[p:]); err != nil {
		return nil, refuseSession("their body is not a zstd frame: %v", err)
	}
	if !h.HasFCS || h.FrameContentSize != raw {
		return nil, refuseSession("their body does not declare the %d bytes their header does", raw)
	}
	dec, err := zstd.NewReader(bytes.NewReader(b[p:]), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(bound)))
	if err != nil {
		return nil, refuseSession("their body cannot be inflated: %v", err)
	}
	defer dec.Close()
	body, err := io.ReadAll(io.LimitReader(dec, int64(raw)+1))
	if err != nil || uint64(len(body)) != raw {
		return nil, refuseSession("their body does not inflate to the %d bytes declared (%d, %v)", raw, len(body), err)
	}
	return ParseSessionBody(img, memoryBytes, format == sessionFormatFiles, body)
}

// ParseSessionBody reads an inflated body: of format 2, which starts with
// the open files, when withFiles is set, else of format 1.
func ParseSessionBody(img *Base, memoryBytes int64, withFiles bool, body []byte) (*Session, error) {
	var files []wasifs.File
	if withFiles {
		if len(body) < 4 {
			return nil, refuseSession("their body is too short for its open files")
		}
		n := binary.LittleEndian.Uint32(body)
		if n > maxSessionFilesBytes || int64(n) > int64(len(body)-4) {
			return nil, refuseSession("their open files take %d bytes, over the %d they may or the body holds", n, maxSessionFilesBytes)
		}
		dec := json.NewDecoder(bytes.NewReader(body[4 : 4+n]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&files); err != nil || dec.More() {
			return nil, refuseSession("their open files are not a list of files: %v", err)
		}
		if len(files) == 0 || len(files) > wasifs.MaxOpen {
			return nil, refuseSession("they have %d open files: format %d has 1 to %d", len(files), sessionFormatFiles, wasifs.MaxOpen)
		}
		body = body[4+n:]
	}
	at := 0
	u32 := func() (uint32, bool) {
		if at+4 > len(body) {
			return 0, false
		}
		v := binary.LittleEndian.Uint32(body[at:])
		at += 4
		return v, true
	}
	n, ok := u32()
	if !ok || int(n) != len(img.Globals) || len(body) < at+8*int(n)+16 {
		return nil, refuseSession("their globals do not match the guest's %d", len(img.Globals))
	}
	st := &Session{Globals: make([]uint64, n), Files: files}
	for i := range st.Globals {
		st.Globals[i] = binary.LittleEndian.Uint64(body[at:])
		at += 8
	}
	st.BufPtr, _ = u32()
	st.BufCap, _ = u32()
	st.Pages, _ = u32()
	count, _ := u32()
	size := int64(st.Pages) * abi.PageSize
	switch {
	case size < int64(len(img.Memory)):
		return nil, refuseSession("their memory of %d bytes is smaller than the image's %d", size, len(img.Memory))
	case size > memoryBytes:
		return nil, refuseSession("their memory of %d bytes is over the memory limit of %d bytes", size, memoryBytes)
	case int64(st.BufPtr)+int64(st.BufCap) > size:
		return nil, refuseSession("their exchange buffer [%d, +%d) is outside their memory", st.BufPtr, st.BufCap)
	case int64(count) > size/BlockSize:
		return nil, refuseSession("they have %d memory blocks, more than %d bytes of memory hold", count, size)
	case int64(len(body)) != int64(at)+int64(count)*(4+BlockSize):
		return nil, refuseSession("their memory blocks take %d bytes, not the %d their index says", len(body)-at, int64(count)*(4+BlockSize))
	}
	st.Blocks = make([]uint32, count)
	for i := range st.Blocks {
		v, _ := u32()
		if int64(v) >= size/BlockSize || (i > 0 && v <= st.Blocks[i-1]) {
			return nil, refuseSession("their memory block %d is out of order or outside memory", i)
		}
		st.Blocks[i] = v
	}
	st.Data = body[at:]
	return st, nil
}
