package wasmhost

import (
	"github.com/tetratelabs/wazero/experimental"

	"github.com/ptcx/ptcx/wasmhost/internal/engine"
	"github.com/ptcx/ptcx/wasmhost/internal/vmem"
)

// cappedMemory backs one instance's linear memory and refuses to grow past
// the run's limit, which may be lower than the Runtime's (the page limit of
// the compiled module). memory.grow then fails in the guest, whose allocator
// reports out of memory. It is used by one goroutine at a time.
//
// Where it can (Linux), it reserves the whole limit up front as an
// anonymous mapping outside the Go heap (reserve): growing is then free and
// takes no time, which matters because a growth cannot be interrupted (the
// guest polls the host only between instructions), and the Go heap does
// not carry every instance's memory. Elsewhere the memory is a Go slice,
// copied to a larger one when it grows.
//
// A memory restored from the Runtime's image (image.go) starts with the
// image's bytes: where it can, the image's sealed memfd is mapped
// copy-on-write over the start of the reservation, so the instance shares
// the image's pages until it writes them; elsewhere they are copied.
type cappedMemory struct {
	limit   uint64
	buf     []byte
	mapped  []byte // the reservation, when there is one
	refused bool   // a growth was refused: the limit was reached
	image   *image // what the memory starts with, when restored
	cow     bool   // the image is mapped copy-on-write (not copied)
	spares  *pool  // where a restored memory's reservation goes when it closes, and comes from (pool.go, spare)
	// huge says part of the reservation asks for transparent huge pages
	// (populateBlocks): it is not kept as a spare, whose growth would then
	// be backed 2 MiB at a time.
	huge bool
	// preset is the resume spare the memory is to be (restoreInto),
	// until the engine allocates it.
	preset *resumeSpare
	// resumed is the Runtime whose resume the memory served, or whose
	// run suspended from it: it becomes one of its resume spares when it
	// closes (pool_resume.go).
	resumed *Runtime
}

// Allocator implements engine.HostMemory: it hands out m.
func (m *cappedMemory) Allocator() experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(capacity, maxBytes uint64) experimental.LinearMemory {
		m.limit = min(m.limit, maxBytes)
		img := m.image
		populate := capacity
		if img != nil {
			// A restored memory's initial pages are the image's: populating
			// them would copy every page the mapping shares.
			populate = 0
		}
		if s := m.preset; img != nil && s != nil {
			m.preset = nil
			m.mapped, m.buf, m.cow, m.huge = s.mem, s.mem[:0], s.cow, s.huge
			return m
		}
		if img != nil {
			if s, ok := m.spares.spare(m.limit); ok {
				m.mapped, m.buf, m.cow = s.mem, s.mem[:0], s.cow
				return m
			}
		}
		if b, ok := vmem.Reserve(m.limit, populate); ok {
			m.mapped = b
			m.buf = b[:0]
			if img != nil {
				m.cow = img.mapInto(b)
				if !m.cow {
					copy(b, img.memory)
				}
			}
			return m
		}
		if img == nil {
			m.buf = make([]byte, 0, min(capacity, m.limit))
			return m
		}
		m.buf = make([]byte, 0, max(min(capacity, m.limit), uint64(len(img.memory))))
		copy(m.buf[:len(img.memory)], img.memory)
		return m
	})
}

// Reallocate implements experimental.LinearMemory. Memory never shrinks, and
// bytes past the length are still zero (from the mapping or from make), as
// wasm requires.
func (m *cappedMemory) Reallocate(size uint64) []byte {
	if size > m.limit {
		m.refused = true
		return nil
	}
	if m.mapped != nil {
		m.buf = m.mapped[:size]
		return m.buf
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	grown := make([]byte, size, min(max(size, 2*uint64(cap(m.buf))), m.limit))
	copy(grown, m.buf)
	m.buf = grown
	return grown
}

// Free implements experimental.LinearMemory.
func (m *cappedMemory) Free() {
	if m.mapped != nil {
		switch {
		case m.resumed != nil && m.image != nil &&
			m.resumed.keepResumeSpare(resumeSpare{mem: m.mapped, used: len(m.buf), cow: m.cow, huge: m.huge}):
		case m.image == nil || m.huge || !m.spares.keep(spare{mem: m.mapped, used: len(m.buf), cow: m.cow}):
			vmem.Release(m.mapped)
		}
		m.mapped = nil
	}
	m.buf = nil
}

// Limit implements engine.HostMemory.
func (m *cappedMemory) Limit() uint64 { return m.limit }

// SetLimit implements engine.HostMemory.
func (m *cappedMemory) SetLimit(limit uint64) { m.limit = limit }

// Image implements engine.HostMemory.
func (m *cappedMemory) Image() *engine.Image {
	if m.image == nil {
		return nil
	}
	return &engine.Image{Memory: m.image.memory, InModule: m.image.inModule, Filled: m.image.filled}
}

// SetCOW implements engine.HostMemory.
func (m *cappedMemory) SetCOW(cow bool) { m.cow = cow }

// Refuse implements engine.HostMemory.
func (m *cappedMemory) Refuse() { m.refused = true }
