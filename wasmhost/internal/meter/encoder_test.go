package meter

// A tiny test-only encoder for hand-assembled modules. It is written apart
// from the package's own encoding helpers so that the tests do not trust
// them.

// Value types and other bytes used by the tests.
const (
	tI32   = 0x7f
	tI64   = 0x7e
	tEmpty = 0x40 // empty block type
)

// uleb encodes v as unsigned LEB128.
func uleb(v uint64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// sleb encodes v as signed LEB128.
func sleb(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		done := (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0)
		if done {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// cat concatenates byte slices.
func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// bs is shorthand for a byte slice.
func bs(b ...byte) []byte { return b }

// vecOf encodes a vector of already-encoded items.
func vecOf(items ...[]byte) []byte {
	return cat(uleb(uint64(len(items))), cat(items...))
}

// str encodes a name.
func str(s string) []byte { return cat(uleb(uint64(len(s))), []byte(s)) }

// sec encodes a section.
func sec(id byte, contents ...[]byte) []byte {
	c := cat(contents...)
	return cat(bs(id), uleb(uint64(len(c))), c)
}

// customSec encodes a custom section.
func customSec(name string, data []byte) []byte { return sec(0, str(name), data) }

// mod encodes a module from its sections.
func mod(sections ...[]byte) []byte {
	return cat([]byte("\x00asm\x01\x00\x00\x00"), cat(sections...))
}

// fn encodes a function type.
func fn(params, results []byte) []byte {
	return cat(bs(0x60), uleb(uint64(len(params))), params, uleb(uint64(len(results))), results)
}

// importFunc encodes a function import.
func importFunc(module, name string, typeIdx uint32) []byte {
	return cat(str(module), str(name), bs(0x00), uleb(uint64(typeIdx)))
}

// importGlobal encodes a global import.
func importGlobal(module, name string, valType byte, mutable bool) []byte {
	m := byte(0)
	if mutable {
		m = 1
	}
	return cat(str(module), str(name), bs(0x03, valType, m))
}

// export encodes an export of kind (0 function, 3 global).
func export(name string, kind byte, idx uint32) []byte {
	return cat(str(name), bs(kind), uleb(uint64(idx)))
}

// body encodes a code-section entry: local declarations (count, type pairs)
// and instructions, to which the final end is added.
func body(locals [][2]uint32, code ...[]byte) []byte {
	var decls [][]byte
	for _, l := range locals {
		decls = append(decls, cat(uleb(uint64(l[0])), bs(byte(l[1]))))
	}
	b := cat(vecOf(decls...), cat(code...), bs(0x0b))
	return cat(uleb(uint64(len(b))), b)
}

// Instructions.
func localGet(i uint32) []byte  { return cat(bs(0x20), uleb(uint64(i))) }
func localSet(i uint32) []byte  { return cat(bs(0x21), uleb(uint64(i))) }
func localTee(i uint32) []byte  { return cat(bs(0x22), uleb(uint64(i))) }
func globalGet(i uint32) []byte { return cat(bs(0x23), uleb(uint64(i))) }
func globalSet(i uint32) []byte { return cat(bs(0x24), uleb(uint64(i))) }
func i32Const(v int32) []byte   { return cat(bs(0x41), sleb(int64(v))) }
func brIf(l uint32) []byte      { return cat(bs(0x0d), uleb(uint64(l))) }
func call(f uint32) []byte      { return cat(bs(0x10), uleb(uint64(f))) }
func loop(bt ...byte) []byte    { return cat(bs(0x03), bt) }

// Bulk-memory instructions, on memory 0.
func memoryInit(seg uint32) []byte { return cat(bs(0xfc, 0x08), uleb(uint64(seg)), bs(0x00)) }
func memoryCopy() []byte           { return bs(0xfc, 0x0a, 0x00, 0x00) }
func memoryFill() []byte           { return bs(0xfc, 0x0b, 0x00) }

var (
	end     = bs(0x0b)
	i32Add  = bs(0x6a)
	i32Sub  = bs(0x6b)
	i32LtU  = bs(0x49)
	i32LeS  = bs(0x4c)
	i32ShrU = bs(0x76)
	drop    = bs(0x1a)
)

// countLoop returns the instructions of a loop that increments local i
// until it reaches local n (at least once): its header runs max(n, 1) times.
func countLoop(i, n uint32) []byte {
	return cat(
		loop(tEmpty),
		localGet(i), i32Const(1), i32Add, localTee(i),
		localGet(n), i32LtU, brIf(0),
		end,
	)
}

// loopModule is a module importing ptcx.poll (function 0) and exporting
// run(n i32) -> i32, which runs countLoop n times and returns the count.
func loopModule() []byte {
	return mod(
		sec(1, vecOf(fn(nil, bs(tI32)), fn(bs(tI32), bs(tI32)))),
		sec(2, vecOf(importFunc("ptcx", "poll", 0))),
		sec(3, vecOf(uleb(1))),
		sec(7, vecOf(export("run", 0, 1))),
		sec(10, vecOf(body([][2]uint32{{1, tI32}}, countLoop(1, 0), localGet(1)))),
	)
}
