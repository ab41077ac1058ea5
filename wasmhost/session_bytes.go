package wasmhost

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
)

// A session suspended to bytes, format version 1. A session between runs
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
// ErrSessionBytes.

const sessionMagic = "PTCXSESS"

const sessionFormat = 1

const sessionHeaderSize = len(sessionMagic) + 2 + 2 + 32 + 32 + 8

func refuseSession(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSessionBytes, fmt.Sprintf(format, args...))
}

// sessionState is a session's bytes once decoded.
type sessionState struct {
	globals        []uint64
	bufPtr, bufCap uint32
	pages          uint32
	blocks         []uint32
	data           []byte
}

var sessionEncoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(1<<20))
	if err != nil {
		panic(fmt.Sprintf("wasmhost: zstd encoder: %v", err)) // only for invalid options
	}
	return e
})

// captureSession encodes the state of inst, a session's instance between
// runs.
func (rt *Runtime) captureSession(inst *instance) ([]byte, error) {
	img := rt.image
	if img == nil {
		return nil, errNoImage
	}
	if rt.closed.Load() {
		return nil, ErrClosed
	}
	size := inst.mem.Size()
	mem, ok := inst.mem.Read(0, size)
	if !ok || int(size)%abi.PageSize != 0 || int(size) < len(img.memory) {
		return nil, fmt.Errorf("wasmhost: the session's memory of %d bytes cannot be read", size)
	}
	globals := make([]uint64, len(img.globals))
	for i, name := range img.globals {
		g := inst.mod.Global(name)
		if g == nil {
			return nil, fmt.Errorf("wasmhost: the guest's global %q is missing", name)
		}
		globals[i] = g.Get()
	}
	return encodeSession(img, mem, globals, inst.bufPtr, inst.bufCap), nil
}

// encodeSession encodes a session's state: its memory (whole pages, at
// least the image's), its globals (in the image's order) and its exchange
// buffer.
func encodeSession(img *image, mem []byte, globals []uint64, bufPtr, bufCap uint32) []byte {
	body := binary.LittleEndian.AppendUint32(nil, uint32(len(globals)))
	for _, g := range globals {
		body = binary.LittleEndian.AppendUint64(body, g)
	}
	body = binary.LittleEndian.AppendUint32(body, bufPtr)
	body = binary.LittleEndian.AppendUint32(body, bufCap)
	index := snapshot.ChangedBlocks(mem, img.memory)
	body = binary.LittleEndian.AppendUint32(body, uint32(len(mem)/abi.PageSize))
	body = binary.LittleEndian.AppendUint32(body, uint32(len(index)))
	for _, i := range index {
		body = binary.LittleEndian.AppendUint32(body, i)
	}
	for _, i := range index {
		body = append(body, mem[int(i)*snapshot.BlockSize:int(i+1)*snapshot.BlockSize]...)
	}
	out := make([]byte, 0, sessionHeaderSize+len(body)/4)
	out = append(out, sessionMagic...)
	out = binary.LittleEndian.AppendUint16(out, sessionFormat)
	out = binary.LittleEndian.AppendUint16(out, abi.ABIVersion)
	out = append(out, img.moduleHash[:]...)
	out = append(out, img.memoryHash[:]...)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(body)))
	return sessionEncoder().EncodeAll(body, out)
}

// decodeSession reads a session's bytes for img, within memoryBytes of
// memory. It never panics: every size is checked.
func decodeSession(img *image, memoryBytes int64, b []byte) (*sessionState, error) {
	if len(b) < sessionHeaderSize || string(b[:len(sessionMagic)]) != sessionMagic {
		return nil, refuseSession("they are not a ptcx session (no %q header)", sessionMagic)
	}
	p := len(sessionMagic)
	if f := binary.LittleEndian.Uint16(b[p:]); f != sessionFormat {
		return nil, refuseSession("they have format version %d, this host reads version %d", f, sessionFormat)
	}
	if v := binary.LittleEndian.Uint16(b[p+2:]); v != abi.ABIVersion {
		return nil, refuseSession("they were made with guest ABI version %d, this host speaks version %d", v, abi.ABIVersion)
	}
	p += 4
	if !bytes.Equal(b[p:p+32], img.moduleHash[:]) || !bytes.Equal(b[p+32:p+64], img.memoryHash[:]) {
		return nil, refuseSession("they were made by another guest or initialised image")
	}
	p += 64
	raw := binary.LittleEndian.Uint64(b[p:])
	p += 8
	globals := int64(len(img.globals))
	bound := 4 + 8*globals + 16 + (memoryBytes/snapshot.BlockSize)*(4+snapshot.BlockSize)
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
	return parseSessionBody(img, memoryBytes, body)
}

// parseSessionBody reads an inflated body.
func parseSessionBody(img *image, memoryBytes int64, body []byte) (*sessionState, error) {
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
	if !ok || int(n) != len(img.globals) || len(body) < at+8*int(n)+16 {
		return nil, refuseSession("their globals do not match the guest's %d", len(img.globals))
	}
	st := &sessionState{globals: make([]uint64, n)}
	for i := range st.globals {
		st.globals[i] = binary.LittleEndian.Uint64(body[at:])
		at += 8
	}
	st.bufPtr, _ = u32()
	st.bufCap, _ = u32()
	st.pages, _ = u32()
	count, _ := u32()
	size := int64(st.pages) * abi.PageSize
	switch {
	case size < int64(len(img.memory)):
		return nil, refuseSession("their memory of %d bytes is smaller than the image's %d", size, len(img.memory))
	case size > memoryBytes:
		return nil, refuseSession("their memory of %d bytes is over the memory limit of %d bytes", size, memoryBytes)
	case int64(st.bufPtr)+int64(st.bufCap) > size:
		return nil, refuseSession("their exchange buffer [%d, +%d) is outside their memory", st.bufPtr, st.bufCap)
	case int64(count) > size/snapshot.BlockSize:
		return nil, refuseSession("they have %d memory blocks, more than %d bytes of memory hold", count, size)
	case int64(len(body)) != int64(at)+int64(count)*(4+snapshot.BlockSize):
		return nil, refuseSession("their memory blocks take %d bytes, not the %d their index says", len(body)-at, int64(count)*(4+snapshot.BlockSize))
	}
	st.blocks = make([]uint32, count)
	for i := range st.blocks {
		v, _ := u32()
		if int64(v) >= size/snapshot.BlockSize || (i > 0 && v <= st.blocks[i-1]) {
			return nil, refuseSession("their memory block %d is out of order or outside memory", i)
		}
		st.blocks[i] = v
	}
	st.data = body[at:]
	return st, nil
}

// resumeSession restores a session's instance from its bytes: an instance
// restored from the image (the pool's when one is ready), reserved for the
// Runtime's memory limit, with the bytes' memory and globals written over
// it. The caller sets its world and readies it (ptcx_next).
func (rt *Runtime) resumeSession(ctx context.Context, saved []byte) (*instance, error) {
	if rt.image == nil {
		return nil, errNoImage
	}
	st, err := decodeSession(rt.image, rt.limits.MemoryBytes, saved)
	if err != nil {
		return nil, err
	}
	inst := rt.pool.take("") // a new instance, or one recycled from a run of no tenant
	if inst == nil {
		if inst, err = rt.restore(ctx, uint64(abi.MemoryPages(rt.limits.MemoryBytes))*abi.PageSize); err != nil {
			return nil, err
		}
	}
	fail := func(err error) (*instance, error) {
		inst.close(ctx)
		return nil, err
	}
	if have := inst.mem.Size() / abi.PageSize; st.pages > have {
		if _, ok := inst.mem.Grow(st.pages - have); !ok {
			return fail(fmt.Errorf("wasmhost: grow the memory to the session's %d pages", st.pages))
		}
	}
	for i, b := range st.blocks {
		if !inst.mem.Write(b*snapshot.BlockSize, st.data[i*snapshot.BlockSize:(i+1)*snapshot.BlockSize]) {
			return fail(fmt.Errorf("wasmhost: write the session's block %d", b))
		}
	}
	for i, name := range rt.image.globals {
		mg := inst.mod.Global(name)
		if mg == nil || !mg.Set(st.globals[i]) {
			return fail(fmt.Errorf("wasmhost: the guest's global %q is missing or not mutable", name))
		}
	}
	inst.bufPtr, inst.bufCap = st.bufPtr, st.bufCap
	return inst, nil
}
