// Package wasmbin reads and rewrites the parts of a wasm binary that
// wasmhost's initialised image replaces. The image restores instances into a
// variant of the guest module: the same code, with its active data segments emptied (the
// image already holds what they wrote), its memory's minimum raised to the
// image's size, and its mutable globals starting at the values the image
// captured. wazero has no snapshot API; this is the part of the module it
// reads at instantiation that the image must replace. This file reads and
// rewrites just those parts of a wasm binary.
package wasmbin

import (
	"bytes"
	"errors"
	"fmt"
)

// ErrBadModule wraps every reason a module cannot be turned into a variant.
var ErrBadModule = errors.New("wasmhost: the guest module cannot be restored from an image")

// Section ids of the wasm binary format.
const (
	secImport = 2
	secMemory = 5
	secGlobal = 6
	secExport = 7
	secData   = 11
)

// Value types of globals the image can capture.
const (
	valI32 = 0x7f
	valI64 = 0x7e
)

// Layout is what variant needs of a module: where its sections are,
// and its mutable globals.
type Layout struct {
	bin      []byte
	sections []section
	// Mutable lists the module's own mutable globals, in index order.
	Mutable []Global
	// Globals counts the global index space, imports included.
	Globals uint32
	// memMax is the memory's maximum in pages, when it declares one.
	memMax    uint32
	hasMemMax bool
	memMin    uint32
}

type section struct {
	id         byte
	start, end int // the content, without the id and size
}

// Global is one of the module's own mutable globals.
type Global struct {
	Index   uint32 // in the global index space (imports first)
	valType byte
	Export  string // the name it is exported under, "" when it is not
}

// wasmReader reads a wasm binary; every read checks bounds, so malformed
// input is an error, never a panic.
type wasmReader struct {
	b   []byte
	pos int
	err error
}

func (r *wasmReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: at byte %d: %s", ErrBadModule, r.pos, fmt.Sprintf(format, args...))
	}
}

func (r *wasmReader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.pos >= len(r.b) {
		r.fail("unexpected end")
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

// u32 reads an unsigned LEB128 of at most 32 bits.
func (r *wasmReader) u32() uint32 {
	var v uint64
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			if v > 0xffffffff {
				r.fail("integer too large")
				return 0
			}
			return uint32(v)
		}
	}
	r.fail("integer too long")
	return 0
}

// sleb skips a signed LEB128 of at most maxBytes bytes.
func (r *wasmReader) sleb(maxBytes int) {
	for i := 0; i < maxBytes; i++ {
		if r.byte()&0x80 == 0 || r.err != nil {
			return
		}
	}
	r.fail("integer too long")
}

func (r *wasmReader) skip(n uint32) {
	if r.err != nil {
		return
	}
	if uint64(len(r.b)-r.pos) < uint64(n) {
		r.fail("%d bytes past the end", n)
		return
	}
	r.pos += int(n)
}

func (r *wasmReader) name() string {
	n := r.u32()
	start := r.pos
	r.skip(n)
	if r.err != nil {
		return ""
	}
	return string(r.b[start:r.pos])
}

// expr skips a constant expression up to its end opcode.
func (r *wasmReader) expr() {
	for n := 0; r.err == nil; n++ {
		if n > 64 {
			r.fail("constant expression too long")
			return
		}
		switch op := r.byte(); op {
		case 0x0b: // end
			return
		case 0x41: // i32.const
			r.sleb(5)
		case 0x42: // i64.const
			r.sleb(10)
		case 0x43: // f32.const
			r.skip(4)
		case 0x44: // f64.const
			r.skip(8)
		case 0x23, 0xd2: // global.get, ref.func
			r.u32()
		case 0xd0: // ref.null
			r.byte()
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended-const arithmetic
		default:
			r.fail("opcode 0x%02x in a constant expression", op)
		}
	}
}

// limits reads memory or table limits: min, and max when present.
func (r *wasmReader) limits() (lo, hi uint32, hasMax bool) {
	switch flag := r.byte(); flag {
	case 0:
		return r.u32(), 0, false
	case 1:
		lo = r.u32()
		return lo, r.u32(), true
	default:
		r.fail("memory or table limits with flags 0x%02x (shared or 64-bit) are not supported", flag)
		return 0, 0, false
	}
}

// Parse reads the layout of the wasm binary bin, which it does not
// copy: bin must not change afterwards.
func Parse(bin []byte) (*Layout, error) {
	if len(bin) < 8 || !bytes.Equal(bin[:8], []byte{0, 'a', 's', 'm', 1, 0, 0, 0}) {
		return nil, fmt.Errorf("%w: not a wasm binary of version 1", ErrBadModule)
	}
	m := &Layout{bin: bin}
	r := &wasmReader{b: bin, pos: 8}
	var importedGlobals uint32
	memories := 0
	exports := map[uint32]string{}
	for r.pos < len(bin) && r.err == nil {
		id := r.byte()
		size := r.u32()
		start := r.pos
		r.skip(size)
		if r.err != nil {
			break
		}
		m.sections = append(m.sections, section{id: id, start: start, end: r.pos})
		s := &wasmReader{b: bin[:r.pos], pos: start}
		switch id {
		case secImport:
			for n := s.u32(); n > 0 && s.err == nil; n-- {
				s.name()
				s.name()
				switch kind := s.byte(); kind {
				case 0: // function
					s.u32()
				case 1: // table
					s.byte()
					s.limits()
				case 2:
					s.fail("an imported memory is not supported")
				case 3:
					s.byte()
					if s.byte() != 0 {
						s.fail("an imported mutable global is state outside the instance")
					}
					importedGlobals++
				default:
					s.fail("import kind 0x%02x", kind)
				}
			}
		case secMemory:
			n := s.u32()
			if n != 1 {
				s.fail("%d memories (want 1)", n)
				break
			}
			memories++
			m.memMin, m.memMax, m.hasMemMax = s.limits()
		case secGlobal:
			n := s.u32()
			for i := uint32(0); i < n && s.err == nil; i++ {
				vt := s.byte()
				mut := s.byte()
				s.expr()
				if mut == 1 {
					if vt != valI32 && vt != valI64 {
						s.fail("a mutable global of type 0x%02x cannot be captured", vt)
					}
					m.Mutable = append(m.Mutable, Global{Index: importedGlobals + i, valType: vt})
				} else if mut != 0 {
					s.fail("global mutability 0x%02x", mut)
				}
			}
			m.Globals = importedGlobals + n
		case secExport:
			for n := s.u32(); n > 0 && s.err == nil; n-- {
				name := s.name()
				kind := s.byte()
				idx := s.u32()
				if kind == 3 {
					if _, seen := exports[idx]; !seen {
						exports[idx] = name
					}
				}
			}
		case secData:
			for n := s.u32(); n > 0 && s.err == nil; n-- {
				switch flag := s.u32(); flag {
				case 0:
					s.expr()
				case 1:
				case 2:
					s.u32()
					s.expr()
				default:
					s.fail("data segment flags %d", flag)
				}
				s.skip(s.u32())
			}
		}
		if s.err == nil && (id == secImport || id == secMemory || id == secGlobal || id == secExport || id == secData) && s.pos != r.pos {
			s.fail("section %d has %d bytes past its content", id, r.pos-s.pos)
		}
		if s.err != nil {
			return nil, s.err
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if memories != 1 {
		return nil, fmt.Errorf("%w: the module defines no memory", ErrBadModule)
	}
	if m.Globals == 0 {
		m.Globals = importedGlobals
	}
	for i := range m.Mutable {
		m.Mutable[i].Export = exports[m.Mutable[i].Index]
	}
	return m, nil
}

// variant returns the module with its active data segments emptied (their
// count and offsets kept), its memory minimum set to pages, and each of its
// mutable globals starting at globals[i] (in the order of m.Mutable).
func (m *Layout) Variant(pages uint32, globals []uint64) ([]byte, error) {
	if len(globals) != len(m.Mutable) {
		return nil, fmt.Errorf("%w: %d global values for %d mutable globals", ErrBadModule, len(globals), len(m.Mutable))
	}
	if m.hasMemMax && pages > m.memMax {
		return nil, fmt.Errorf("%w: an image of %d pages is past the memory's maximum of %d", ErrBadModule, pages, m.memMax)
	}
	out := make([]byte, 0, len(m.bin))
	out = append(out, m.bin[:8]...)
	for _, sec := range m.sections {
		content := m.bin[sec.start:sec.end]
		switch sec.id {
		case secMemory:
			c := appendU32(nil, 1)
			if m.hasMemMax {
				c = appendU32(append(c, 1), pages)
				c = appendU32(c, m.memMax)
			} else {
				c = appendU32(append(c, 0), pages)
			}
			content = c
		case secGlobal:
			content = m.rewriteGlobals(content, globals)
		case secData:
			content = emptyData(content)
		}
		out = append(out, sec.id)
		out = appendU32(out, uint32(len(content)))
		out = append(out, content...)
	}
	return out, nil
}

// rewriteGlobals returns the global section with each mutable global's
// initialiser replaced by a constant of its captured value. Parse
// checked the section.
func (m *Layout) rewriteGlobals(content []byte, globals []uint64) []byte {
	s := &wasmReader{b: content}
	n := s.u32()
	c := appendU32(nil, n)
	k := 0
	for i := uint32(0); i < n; i++ {
		start := s.pos
		vt := s.byte()
		mut := s.byte()
		s.expr()
		if mut != 1 {
			c = append(c, content[start:s.pos]...)
			continue
		}
		c = append(c, vt, 1)
		if vt == valI32 {
			c = appendS64(append(c, 0x41), int64(int32(uint32(globals[k]))))
		} else {
			c = appendS64(append(c, 0x42), int64(globals[k]))
		}
		c = append(c, 0x0b)
		k++
	}
	return c
}

// emptyData returns the data section with every active segment's bytes
// removed. Passive segments (memory.init) are kept as they are.
func emptyData(content []byte) []byte {
	s := &wasmReader{b: content}
	n := s.u32()
	c := appendU32(nil, n)
	for i := uint32(0); i < n; i++ {
		start := s.pos
		flag := s.u32()
		switch flag {
		case 0:
			s.expr()
		case 2:
			s.u32()
			s.expr()
		}
		head := s.pos
		size := s.u32()
		s.skip(size)
		if flag == 1 {
			c = append(c, content[start:s.pos]...)
			continue
		}
		c = append(c, content[start:head]...)
		c = appendU32(c, 0)
	}
	return c
}

func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
