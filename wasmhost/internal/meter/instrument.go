package meter

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// Options says how to meter a module.
type Options struct {
	Module, Name string // the imported function to call every Interval loop iterations; its type must be () -> i32
	Interval     uint32 // loop iterations between calls; must be >= 1

	// BulkBytes, if not 0, makes memory.copy, memory.fill and memory.init
	// count against the same countdown as loops: an instruction moving or
	// setting n bytes is charged n / BulkBytes (rounded down) iterations
	// before it runs. It must be 0 (bulk-memory instructions run unmetered)
	// or a power of two of at least 2.
	BulkBytes uint32
}

// stats describes what instrument did.
type stats struct {
	loops    int    // loop headers instrumented
	bodies   int    // function bodies rewritten
	global   uint32 // index of the counter global
	poll     uint32 // function index of the import called
	checkLen int    // bytes inserted at each loop header

	// Bulk-memory instructions charged (all 0 if BulkBytes is 0), and the
	// function bodies that were given a local to do so.
	inits, copies, fills int
	localBodies          int
}

// bulk is the number of bulk-memory instructions charged.
func (st stats) bulk() int { return st.inits + st.copies + st.fills }

// Instrument returns a copy of the wasm binary module in which every loop header counts down a new mutable i32 global
// and calls the import when it reaches zero, then resets it to Interval. It never modifies wasm.
//
// At each loop header, right after the loop's block type, it inserts
//
//	global.get $g  i32.const 1  i32.sub  global.set $g
//	global.get $g  i32.eqz
//	if
//	  i32.const Interval  global.set $g
//	  call $import  drop
//	end
//
// where $g is a new global appended after all the module's globals and
// initialised to Interval. The code leaves the operand stack as it found it,
// so loops with parameters and results still validate. The import must have
// type () -> i32; its result is ignored. To stop the guest, the import's
// host function panics or otherwise fails the call. The counter is reset
// before the call, so an instance whose import failed still polls every
// Interval iterations if it is called again.
//
// If opt.BulkBytes is not 0, memory.copy, memory.fill and memory.init are
// charged too: the counter is decremented by n >> log2(BulkBytes), n being
// the instruction's byte count, before the instruction runs, and the
// check fires when the counter is zero or less. Every function body holding
// one of these instructions gets one more local, $t, of type i32, declared
// last (a new local declaration (1 i32) after the body's others), so that its
// index is the number of the function's parameters plus the number of
// locals it declares. Right before each such instruction, whose operands are
// all i32 and whose byte count is on top of the stack, Instrument inserts
//
//	local.set $t
//	global.get $g  local.get $t  i32.const log2(BulkBytes)  i32.shr_u  i32.sub  global.set $g
//	global.get $g  i32.const 0  i32.le_s
//	if
//	  i32.const Interval  global.set $g
//	  call $import  drop
//	end
//	local.get $t
//
// and the loop headers' i32.eqz becomes i32.const 0 i32.le_s. The counter
// is never left at zero or less: a charge of Interval iterations or more
// calls the import once, right away, and resets the counter. The
// function's other locals keep their indices. A function whose parameters
// and locals would number more than 2^32-1 with $t, or whose type index is
// out of range, is an error. (wazero limits the locals a body declares to
// 2^32-1, and has no lower limit such as browsers' 50,000.)
//
// The output ends with a custom section named "ptcx.metered" holding
// Interval as a little-endian u32, followed, if BulkBytes is not 0, by
// BulkBytes as a little-endian u32; Instrument refuses an input that has one.
//
// Instrument decodes the whole module and every instruction, so that only
// real loop opcodes are instrumented. It accepts the instructions of
// WebAssembly 2.0 (MVP, sign extension, non-trapping float-to-int, bulk
// memory, reference types, multi-value) and multi-memory memory arguments;
// any other instruction (SIMD, threads, exception handling, tail calls, GC)
// is an error naming the opcode and its offset. Malformed or truncated
// input is an error, never a panic. Errors start with "meter: ". The output
// depends only on the input and opt; with BulkBytes 0 it is what it was
// before BulkBytes existed.
//
// Offsets recorded in DWARF custom sections, if any, are not updated.
func Instrument(wasm []byte, opt Options) ([]byte, error) {
	out, _, err := instrument(wasm, opt)
	return out, err
}

// instrument is Instrument, also returning what it did.
func instrument(wasm []byte, opt Options) ([]byte, stats, error) {
	var st stats
	if opt.Interval == 0 {
		return nil, st, fmt.Errorf("meter: Interval must be at least 1")
	}
	if opt.Interval > math.MaxInt32 {
		return nil, st, fmt.Errorf("meter: Interval %d is larger than %d", opt.Interval, math.MaxInt32)
	}
	shift := -1 // log2(BulkBytes), -1 for no charge
	switch b := opt.BulkBytes; {
	case b == 0:
	case b&(b-1) != 0:
		return nil, st, fmt.Errorf("meter: BulkBytes %d is not a power of two", b)
	case b == 1:
		// n >> 0 can be 2^31 or more, which the i32 counter cannot take
		// away without wrapping around to a positive value.
		return nil, st, fmt.Errorf("meter: BulkBytes must be at least 2, not 1")
	default:
		shift = bits.TrailingZeros32(b)
	}
	m, err := decodeModule(wasm, opt.Module, opt.Name)
	if err != nil {
		return nil, st, err
	}
	if m.metered {
		return nil, st, fmt.Errorf("meter: the module is already metered (it has a %q custom section)", meteredSection)
	}
	if !m.pollFound {
		return nil, st, fmt.Errorf("meter: the module does not import function %s.%s", opt.Module, opt.Name)
	}
	if uint64(m.pollType) >= uint64(len(m.types)) {
		return nil, st, fmt.Errorf("meter: import %s.%s at offset %d has type index %d, but the module has %d types",
			opt.Module, opt.Name, m.pollOff, m.pollType, len(m.types))
	}
	if t := m.types[m.pollType]; len(t.params) != 0 || len(t.results) != 1 || t.results[0] != 0x7f {
		return nil, st, fmt.Errorf("meter: import %s.%s at offset %d has type %s, want () -> i32",
			opt.Module, opt.Name, m.pollOff, t)
	}
	if uint64(m.globalImports)+uint64(m.globals) >= math.MaxUint32 {
		return nil, st, fmt.Errorf("meter: the module has too many globals to add one")
	}
	st.global = m.globalImports + m.globals
	st.poll = m.pollIndex
	check := checkCode(st.global, st.poll, int32(opt.Interval), shift >= 0)
	st.checkLen = len(check)
	st.loops = len(m.loops)
	st.bodies = len(m.bodies)

	e := emitter{m: m, check: check, interval: int32(opt.Interval), bulkBytes: opt.BulkBytes}
	if shift >= 0 {
		if err := e.planCharges(st.global, st.poll, uint8(shift)); err != nil {
			return nil, st, err
		}
		for _, off := range m.bulk {
			r := &reader{buf: m.buf, pos: off + 1, end: len(m.buf)}
			switch sub, _ := r.u32("0xfc sub-opcode"); sub { // decoded before
			case subMemoryInit:
				st.inits++
			case subMemoryCopy:
				st.copies++
			case subMemoryFill:
				st.fills++
			}
		}
		for _, c := range e.charges {
			if c != nil {
				st.localBodies++
			}
		}
	}
	out, err := e.emit()
	if err != nil {
		return nil, st, err
	}
	return out, st, nil
}

// checkCode returns the instructions inserted at each loop header. The test
// is i32.eqz, or i32.const 0 i32.le_s if leS.
func checkCode(global, poll uint32, interval int32, leS bool) []byte {
	var c []byte
	c = appendU32(append(c, 0x23), global) // global.get
	c = append(c, 0x41, 0x01, 0x6b)        // i32.const 1, i32.sub
	c = appendU32(append(c, 0x24), global) // global.set
	return appendTest(c, global, poll, interval, leS)
}

// chargeCode returns the instructions inserted before each bulk-memory
// instruction of a body whose new local is local.
func chargeCode(global, poll, local uint32, shift uint8, interval int32) []byte {
	c := make([]byte, 0, 3*5+4*5+5+5+16)   // local, global and poll indices, interval, the rest
	c = appendU32(append(c, 0x21), local)  // local.set $t
	c = appendU32(append(c, 0x23), global) // global.get
	c = appendU32(append(c, 0x20), local)  // local.get $t
	c = append(c, 0x41, shift, 0x76, 0x6b) // i32.const shift (< 64: one byte), i32.shr_u, i32.sub
	c = appendU32(append(c, 0x24), global) // global.set
	c = appendTest(c, global, poll, interval, true)
	return appendU32(append(c, 0x20), local) // local.get $t
}

// appendTest appends the test of the counter and the call:
//
//	global.get $g  i32.eqz (or i32.const 0  i32.le_s)
//	if  i32.const interval  global.set $g  call $poll  drop  end
func appendTest(c []byte, global, poll uint32, interval int32, leS bool) []byte {
	c = appendU32(append(c, 0x23), global) // global.get
	if leS {
		c = append(c, 0x41, 0x00, 0x4c) // i32.const 0, i32.le_s
	} else {
		c = append(c, 0x45) // i32.eqz
	}
	c = append(c, 0x04, 0x40)                // if (empty block type)
	c = appendS32(append(c, 0x41), interval) // i32.const interval
	c = appendU32(append(c, 0x24), global)   // global.set
	c = appendU32(append(c, 0x10), poll)     // call
	c = append(c, 0x1a)                      // drop
	return append(c, 0x0b)                   // end
}

// String formats a function type for error messages.
func (t funcType) String() string {
	return fmt.Sprintf("(%s) -> (%s)", typeNames(t.params), typeNames(t.results))
}

// typeNames formats value type bytes.
func typeNames(types []byte) string {
	s := ""
	for i, b := range types {
		if i > 0 {
			s += ", "
		}
		switch b {
		case 0x7f:
			s += "i32"
		case 0x7e:
			s += "i64"
		case 0x7d:
			s += "f32"
		case 0x7c:
			s += "f64"
		case 0x7b:
			s += "v128"
		case 0x70:
			s += "funcref"
		case 0x6f:
			s += "externref"
		default:
			s += fmt.Sprintf("0x%02x", b)
		}
	}
	return s
}

// meteredContents returns the contents of the ptcx.metered custom section:
// its name, then interval as a little-endian u32, then, if it is not 0,
// bulkBytes as a little-endian u32.
func meteredContents(interval, bulkBytes uint32) []byte {
	c := appendU32(nil, uint32(len(meteredSection)))
	c = append(c, meteredSection...)
	c = binary.LittleEndian.AppendUint32(c, interval)
	if bulkBytes != 0 {
		c = binary.LittleEndian.AppendUint32(c, bulkBytes)
	}
	return c
}
