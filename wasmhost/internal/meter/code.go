package meter

import "fmt"

// immediate says what follows an opcode of the one-byte opcode space.
type immediate uint8

const (
	immBad      immediate = iota // not an instruction this package decodes
	immNone                      // no immediate
	immBlock                     // block type (block, if)
	immLoop                      // block type; the instruction is instrumented
	immEnd                       // end of a block or of the expression
	immU32                       // one u32 index
	immU32x2                     // two u32 indices (call_indirect)
	immBrTable                   // vector of labels and a default label
	immMemarg                    // memory argument of loads and stores
	immI32                       // s32 constant
	immI64                       // s64 constant
	immF32                       // 4 bytes
	immF64                       // 8 bytes
	immSelectT                   // vector of value types (typed select)
	immRefType                   // reference type (ref.null)
	immPrefixFC                  // 0xFC prefix and a u32 sub-opcode
)

// opcodes classifies every one-byte opcode. Spec 2.0: MVP, sign extension,
// non-trapping float-to-int, bulk memory, reference types and multi-value,
// and the multi-memory memory argument.
var opcodes = func() (t [256]immediate) {
	set := func(imm immediate, ops ...int) {
		for _, op := range ops {
			t[op] = imm
		}
	}
	set(immNone, 0x00, 0x01, 0x05, 0x0f, 0x1a, 0x1b, 0xd1) // unreachable nop else return drop select ref.is_null
	set(immBlock, 0x02, 0x04)                              // block if
	set(immLoop, 0x03)
	set(immEnd, 0x0b)
	set(immU32, 0x0c, 0x0d, 0x10) // br br_if call
	set(immU32x2, 0x11)           // call_indirect: type index, table index
	set(immBrTable, 0x0e)
	set(immSelectT, 0x1c)
	for op := 0x20; op <= 0x26; op++ { // local.get/set/tee, global.get/set, table.get/set
		t[op] = immU32
	}
	for op := 0x28; op <= 0x3e; op++ { // loads and stores
		t[op] = immMemarg
	}
	set(immU32, 0x3f, 0x40) // memory.size memory.grow: memory index
	set(immI32, 0x41)
	set(immI64, 0x42)
	set(immF32, 0x43)
	set(immF64, 0x44)
	for op := 0x45; op <= 0xc4; op++ { // numeric, including sign extension
		t[op] = immNone
	}
	set(immRefType, 0xd0) // ref.null
	set(immU32, 0xd2)     // ref.func
	set(immPrefixFC, 0xfc)
	return t
}()

// unsupportedName describes an opcode this package refuses.
func unsupportedName(op byte) string {
	what := "unknown"
	switch {
	case op >= 0x06 && op <= 0x0a, op == 0x18, op == 0x19, op == 0x1f:
		what = "exception handling"
	case op == 0x12 || op == 0x13:
		what = "tail calls"
	case op == 0x14 || op == 0x15 || op >= 0xd3 && op <= 0xd6:
		what = "typed function references"
	case op == 0xfb:
		what = "GC prefix"
	case op == 0xfd:
		what = "SIMD prefix"
	case op == 0xfe:
		what = "threads prefix"
	}
	return fmt.Sprintf("0x%02x (%s)", op, what)
}

// sites collects where an expression's instructions are to be
// instrumented.
type sites struct {
	loops []int // offsets just past the block type of every loop
	bulk  []int // offsets of the 0xfc prefix of every memory.init, memory.copy and memory.fill
	// tableWrites counts the instructions that can change a table or an
	// element segment: table.set, table.init, elem.drop, table.copy,
	// table.grow and table.fill.
	tableWrites int
}

// opTableSet is table.set, the one-byte opcode that writes a table.
const opTableSet = 0x26

// writesTable reports whether the 0xfc sub-opcode sub can change a table
// or an element segment: table.init, elem.drop, table.copy, table.grow,
// table.fill (not table.size).
func writesTable(sub uint32) bool { return sub >= 12 && sub <= 17 && sub != 16 }

// Sub-opcodes of the 0xfc instructions that move or set up to the whole
// memory.
const (
	subMemoryInit = 8
	subMemoryCopy = 10
	subMemoryFill = 11
)

// decodeExpr decodes an expression from r.pos up to and including the end
// that closes it, leaving r.pos just past that end. It appends to s.loops,
// for each loop, the offset just past the loop's block type, where the check
// goes, and to s.bulk the offset of each memory.init, memory.copy and
// memory.fill, where the charge goes.
//
// It runs over every instruction of the module, so the common cases (no
// immediate, a one- or two-byte LEB128 immediate, a short memory argument,
// an empty or i32 block type) are decoded inline; the others go through the
// reader's methods with r.pos synchronised.
func decodeExpr(r *reader, s *sites) error {
	buf := r.buf[:r.end]
	pos := r.pos
	depth := 1
	for {
		if pos >= len(buf) {
			return r.errorf(pos, "unexpected end of expression (%d blocks open)", depth)
		}
		off := pos
		op := buf[pos]
		pos++
		imm := opcodes[op]
		switch imm {
		case immNone:
			continue
		case immEnd:
			depth--
			if depth == 0 {
				r.pos = pos
				return nil
			}
			continue
		case immU32, immI32:
			if op == opTableSet {
				s.tableWrites++
			}
			if n := shortLEB(buf, pos); n > 0 {
				pos += n
				continue
			}
		case immMemarg:
			if pos < len(buf) && buf[pos] < 0x40 { // alignment, no memory index
				if n := shortLEB(buf, pos+1); n > 0 {
					pos += 1 + n
					continue
				}
			}
		case immBlock, immLoop:
			if pos < len(buf) && (buf[pos] == 0x40 || buf[pos] == 0x7f) {
				pos++
				depth++
				if imm == immLoop {
					s.loops = append(s.loops, pos)
				}
				continue
			}
		case immPrefixFC:
			r.pos = pos
			sub, err := r.prefixFC(off)
			if err != nil {
				return err
			}
			pos = r.pos
			if sub == subMemoryInit || sub == subMemoryCopy || sub == subMemoryFill {
				s.bulk = append(s.bulk, off)
			}
			if writesTable(sub) {
				s.tableWrites++
			}
			continue
		case immBad:
			return unsupported(off, unsupportedName(op))
		}
		r.pos = pos
		if err := r.immediates(imm, off); err != nil {
			return err
		}
		pos = r.pos
		if imm == immBlock || imm == immLoop {
			depth++
			if imm == immLoop {
				s.loops = append(s.loops, pos)
			}
		}
	}
}

// shortLEB returns the length of the LEB128 number at buf[pos] if it takes
// one or two bytes (always a valid u32, s32 or s33), else 0.
func shortLEB(buf []byte, pos int) int {
	if pos < len(buf) && buf[pos] < 0x80 {
		return 1
	}
	if pos+1 < len(buf) && buf[pos+1] < 0x80 {
		return 2
	}
	return 0
}

// immediates reads the immediates of kind imm of the instruction at off,
// from r.pos.
func (r *reader) immediates(imm immediate, off int) error {
	switch imm {
	case immBlock, immLoop:
		return r.blockType()
	case immU32:
		_, err := r.u32("index")
		return err
	case immU32x2:
		if _, err := r.u32("type index"); err != nil {
			return err
		}
		_, err := r.u32("table index")
		return err
	case immBrTable:
		n, err := r.u32("br_table length")
		if err != nil {
			return err
		}
		// n labels and the default one, each at least one byte.
		if uint64(n) >= uint64(r.end-r.pos) {
			return r.errorf(r.pos, "br_table of %d labels runs past the end", n)
		}
		for i := uint64(0); i <= uint64(n); i++ {
			if _, err := r.u32("br_table label"); err != nil {
				return err
			}
		}
		return nil
	case immMemarg:
		return r.memarg()
	case immI32:
		_, err := r.signed(32, "i32.const")
		return err
	case immI64:
		_, err := r.signed(64, "i64.const")
		return err
	case immF32:
		return r.skip(4, "f32.const")
	case immF64:
		return r.skip(8, "f64.const")
	case immSelectT:
		n, err := r.u32("select type count")
		if err != nil {
			return err
		}
		if uint64(n) > uint64(r.end-r.pos) {
			return r.errorf(r.pos, "select of %d types runs past the end", n)
		}
		for i := uint32(0); i < n; i++ {
			if err := r.valType(); err != nil {
				return err
			}
		}
		return nil
	case immRefType:
		return r.refType()
	}
	// immNone, immEnd and immPrefixFC are decoded inline, immBad refused
	// before.
	return r.errorf(off, "internal error: opcode 0x%02x has immediate kind %d", r.buf[off], imm)
}

// blockType reads a block type: empty (0x40), a value type, or a type index
// as a non-negative s33.
func (r *reader) blockType() error {
	if r.pos >= r.end {
		return r.errorf(r.pos, "unexpected end reading block type")
	}
	b := r.buf[r.pos]
	if b == 0x40 {
		r.pos++
		return nil
	}
	if b&0xc0 == 0x40 { // a one-byte negative s33: a value type
		return r.valType()
	}
	off := r.pos
	idx, err := r.signed(33, "block type")
	if err != nil {
		return err
	}
	if idx < 0 {
		return r.errorf(off, "invalid block type %d", idx)
	}
	return nil
}

// memarg reads a memory argument: alignment, the memory index when bit 6 of
// the alignment is set (multi-memory), and the offset.
func (r *reader) memarg() error {
	off := r.pos
	align, err := r.u32("alignment")
	if err != nil {
		return err
	}
	if align >= 1<<7 {
		return r.errorf(off, "invalid alignment field %d", align)
	}
	if align&(1<<6) != 0 {
		if _, err := r.u32("memory index"); err != nil {
			return err
		}
	}
	_, err = r.u32("offset")
	return err
}

// prefixFC reads the sub-opcode and immediates of a 0xFC instruction whose
// prefix is at off and was consumed, and returns the sub-opcode.
func (r *reader) prefixFC(off int) (uint32, error) {
	sub, err := r.u32("0xfc sub-opcode")
	if err != nil {
		return 0, err
	}
	var n int // u32 immediates
	switch {
	case sub <= 7: // saturating truncations
	case sub == 9, sub == 11, sub == 13, sub >= 15 && sub <= 17:
		// data.drop, memory.fill, elem.drop, table.grow/size/fill
		n = 1
	case sub == 8, sub == 10, sub == 12, sub == 14:
		// memory.init, memory.copy, table.init, table.copy
		n = 2
	default:
		return 0, unsupported(off, fmt.Sprintf("0xfc %d", sub))
	}
	for ; n > 0; n-- {
		if _, err := r.u32("index"); err != nil {
			return 0, err
		}
	}
	return sub, nil
}

// valType reads a value type.
func (r *reader) valType() error {
	off := r.pos
	b, err := r.byte("value type")
	if err != nil {
		return err
	}
	switch b {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f: // i32 i64 f32 f64 v128 funcref externref
		return nil
	}
	return r.errorf(off, "unsupported value type 0x%02x", b)
}

// refType reads a reference type.
func (r *reader) refType() error {
	off := r.pos
	b, err := r.byte("reference type")
	if err != nil {
		return err
	}
	if b != 0x70 && b != 0x6f {
		return r.errorf(off, "unsupported reference type 0x%02x", b)
	}
	return nil
}
