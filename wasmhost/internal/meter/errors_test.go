package meter

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

// wantError instruments wasm and checks the error contains every part.
func wantError(t *testing.T, wasm []byte, opt Options, parts ...string) {
	t.Helper()
	in := bytes.Clone(wasm)
	out, err := Instrument(wasm, opt)
	if err == nil {
		t.Fatalf("no error (output of %d bytes)", len(out))
	}
	if out != nil {
		t.Errorf("output of %d bytes with the error", len(out))
	}
	if !strings.HasPrefix(err.Error(), "meter: ") {
		t.Errorf("error %q does not start with \"meter: \"", err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
	if !bytes.Equal(in, wasm) {
		t.Error("the input was modified")
	}
}

var pollOpt = Options{Module: "ptcx", Name: "poll", Interval: 100}

// withImports is loopModule with other imports and types.
func withImports(types [][]byte, imports ...[]byte) []byte {
	types = append(types, fn(bs(tI32), bs(tI32)))
	return mod(
		sec(1, vecOf(types...)),
		sec(2, vecOf(imports...)),
		sec(3, vecOf(uleb(uint64(len(types)-1)))),
		sec(10, vecOf(body([][2]uint32{{1, tI32}}, countLoop(1, 0), localGet(1)))),
	)
}

func TestMissingImport(t *testing.T) {
	for name, wasm := range map[string][]byte{
		"no imports":    mod(sec(1, vecOf(fn(nil, nil)))),
		"empty module":  mod(),
		"other name":    withImports([][]byte{fn(nil, bs(tI32))}, importFunc("ptcx", "pol", 0), importFunc("ptcx2", "poll", 0)),
		"not function":  withImports(nil, importGlobal("ptcx", "poll", tI32, false)),
		"case differs":  withImports([][]byte{fn(nil, bs(tI32))}, importFunc("PTCX", "poll", 0)),
		"name is field": withImports([][]byte{fn(nil, bs(tI32))}, importFunc("poll", "ptcx", 0)),
	} {
		t.Run(name, func(t *testing.T) {
			wantError(t, wasm, pollOpt, "does not import", "ptcx.poll")
		})
	}
	wantError(t, loopModule(), Options{Module: "env", Name: "tick", Interval: 1}, "does not import", "env.tick")
}

func TestWrongImportType(t *testing.T) {
	for name, typ := range map[string][]byte{
		"no result":   fn(nil, nil),
		"param":       fn(bs(tI32), bs(tI32)),
		"i64 result":  fn(nil, bs(tI64)),
		"two results": fn(nil, bs(tI32, tI32)),
	} {
		t.Run(name, func(t *testing.T) {
			wantError(t, withImports([][]byte{typ}, importFunc("ptcx", "poll", 0)), pollOpt, "ptcx.poll", "want () -> i32")
		})
	}
	t.Run("bad index", func(t *testing.T) {
		wantError(t, withImports(nil, importFunc("ptcx", "poll", 7)), pollOpt, "ptcx.poll", "type index 7")
	})
}

func TestInterval(t *testing.T) {
	wantError(t, loopModule(), Options{Module: "ptcx", Name: "poll", Interval: 0}, "Interval")
	wantError(t, loopModule(), Options{Module: "ptcx", Name: "poll", Interval: math.MaxInt32 + 1}, "Interval", "2147483648")
	wantError(t, loopModule(), Options{Module: "ptcx", Name: "poll", Interval: math.MaxUint32}, "Interval")
	if _, err := Instrument(loopModule(), Options{Module: "ptcx", Name: "poll", Interval: math.MaxInt32}); err != nil {
		t.Fatal(err)
	}
}

func TestAlreadyMetered(t *testing.T) {
	once, err := Instrument(loopModule(), pollOpt)
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, once, pollOpt, "already metered")
	// The section is recognised anywhere, whatever its contents.
	m := loopModule()
	wantError(t, cat(m[:8], customSec("ptcx.metered", nil), m[8:]), pollOpt, "already metered")
	// Other names are not.
	if _, err := Instrument(cat(m, customSec("ptcx.metered2", nil)), pollOpt); err != nil {
		t.Fatal(err)
	}
}

// TestTruncated cuts a module with every kind of section at every length:
// no prefix panics, and every prefix that does not end at a section
// boundary is an error.
func TestTruncated(t *testing.T) {
	wasm := everySection()
	if _, err := Instrument(wasm, pollOpt); err != nil {
		t.Fatal(err)
	}
	boundary := map[int]bool{8: true}
	for _, s := range sections(t, wasm) {
		boundary[bytes.Index(wasm, s.raw)+len(s.raw)] = true
	}
	for n := 0; n < len(wasm); n++ {
		prefix := bytes.Clone(wasm[:n])
		out, err := Instrument(prefix, pollOpt)
		if boundary[n] {
			if err == nil {
				// A complete module: the output must be one too.
				if _, err := decodeModule(out, "ptcx", "poll"); err != nil {
					t.Errorf("prefix %d: output does not decode: %v", n, err)
				}
			}
			continue
		}
		if err == nil {
			t.Errorf("prefix of %d bytes: no error", n)
		} else if !strings.HasPrefix(err.Error(), "meter: malformed module at offset ") {
			t.Errorf("prefix of %d bytes: %v", n, err)
		}
	}
}

// TestUnsupportedOpcodes checks that instructions outside the supported set
// are errors naming the opcode and its offset in the input.
func TestUnsupportedOpcodes(t *testing.T) {
	for _, tc := range []struct {
		code []byte
		want string
	}{
		{bs(0xfd, 0x0c), "0xfd (SIMD prefix)"},
		{bs(0xfe, 0x03, 0x00), "0xfe (threads prefix)"},
		{bs(0xfb, 0x00), "0xfb (GC prefix)"},
		{bs(0x06, 0x40), "0x06 (exception handling)"},
		{bs(0x08, 0x00), "0x08 (exception handling)"},
		{bs(0x1f, 0x40), "0x1f (exception handling)"},
		{bs(0x12, 0x00), "0x12 (tail calls)"},
		{bs(0x13, 0x00, 0x00), "0x13 (tail calls)"},
		{bs(0x14, 0x00), "0x14 (typed function references)"},
		{bs(0x27), "0x27 (unknown)"},
		{bs(0xc5), "0xc5 (unknown)"},
		{bs(0xff), "0xff (unknown)"},
		{bs(0xfc, 0x12), "0xfc 18"},
		{bs(0xfc, 0x80, 0x01), "0xfc 128"},
	} {
		prefix := cat(i32Const(3), drop, bs(0x03, 0x40), i32Const(7), drop) // a loop and 0x03 bytes before it
		wasm := mod(
			sec(1, vecOf(fn(nil, bs(tI32)))),
			sec(2, vecOf(importFunc("ptcx", "poll", 0))),
			sec(3, vecOf(uleb(0))),
			sec(10, vecOf(body(nil, prefix, tc.code, end))),
		)
		off := bytes.LastIndex(wasm, cat(prefix, tc.code)) + len(prefix)
		wantError(t, wasm, pollOpt, "unsupported opcode "+tc.want, fmt.Sprintf("at offset %d", off))
	}
}

// TestMalformed checks errors for modules broken in various ways.
func TestMalformed(t *testing.T) {
	good := loopModule()
	ss := sections(t, good)
	types, imports, funcs, exports, code := ss[0].raw, ss[1].raw, ss[2].raw, ss[3].raw, ss[4].raw
	loopBody := func(code ...[]byte) []byte {
		return sec(10, vecOf(body([][2]uint32{{1, tI32}}, code...)))
	}
	for _, tc := range []struct {
		name string
		wasm []byte
		want string
	}{
		{"empty", nil, "unexpected end reading the header"},
		{"short header", []byte("\x00asm\x01"), "offset 5: unexpected end reading the header"},
		{"short garbage", []byte("\x00asn"), "not a wasm binary module"},
		{"bad magic", []byte("\x00asn\x01\x00\x00\x00"), "not a wasm binary module"},
		{"version 2", []byte("\x00asm\x02\x00\x00\x00"), "unsupported version"},
		{"component", []byte("\x00asm\x0d\x00\x01\x00"), "unsupported version"},
		{"out of order", mod(imports, types, funcs, code), "out of order"},
		{"repeated", mod(types, types, imports, funcs, code), "out of order"},
		{"data count after code", mod(types, imports, funcs, code, sec(12, uleb(0))), "out of order"},
		{"unknown section", mod(types, imports, sec(14, nil)), "unknown section id 14"},
		{"section past end", cat(mod(types, imports), bs(0x03, 0x05, 0x01)), "runs past the end"},
		{"section with extra bytes", mod(types, imports, sec(3, vecOf(uleb(1)), bs(0)), code), "past its contents"},
		{"no code", mod(types, imports, funcs, exports), "no code section"},
		{"too many bodies", mod(types, imports, funcs, sec(10, vecOf(body(nil), body(nil)))), "2 function bodies for 1"},
		{"body past section", mod(types, imports, funcs, sec(10, uleb(1), uleb(10), bs(0, 0x0b))), "runs past the end"},
		{"bytes after end", mod(types, imports, funcs, loopBody(countLoop(1, 0), localGet(1), end, bs(0x01))), "past its end"},
		{"missing end", mod(types, imports, funcs, sec(10, vecOf(cat(uleb(3), bs(0x00, 0x03, 0x40))))), "unexpected end of expression"},
		{"bad block type", mod(types, imports, funcs, loopBody(bs(0x03, 0x7f-0x20), end)), "value type"},
		{"negative type index", mod(types, imports, funcs, loopBody(bs(0x02, 0xbf, 0x7f), end)), "invalid block type"},
		{"long LEB", mod(types, imports, funcs, loopBody(bs(0x20, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00))), "too long"},
		{"i32.const overflow", mod(types, imports, funcs, loopBody(bs(0x41, 0xff, 0xff, 0xff, 0xff, 0x0f))), "overflows"},
		{"alignment", mod(types, imports, funcs, loopBody(bs(0x28, 0x80, 0x01, 0x00))), "alignment"},
		{"huge br_table", mod(types, imports, funcs, loopBody(bs(0x0e, 0xff, 0xff, 0xff, 0xff, 0x0f))), "br_table"},
		{"huge vector", mod(sec(1, bs(0xff, 0xff, 0xff, 0xff, 0x0f))), "cannot fit"},
		{"bad type form", mod(sec(1, vecOf(bs(0x5f, 0, 0)))), "type form 0x5f"},
		{"bad value type", mod(sec(1, vecOf(bs(0x60, 1, 0x64, 0)))), "value type 0x64"},
		{"bad import kind", mod(types, sec(2, vecOf(cat(str("a"), str("b"), bs(0x05, 0))))), "import kind 0x05"},
		{"bad UTF-8", mod(types, sec(2, vecOf(cat(str("\xff"), str("b"), bs(0x00, 0))))), "UTF-8"},
		{"bad custom name", cat(mod(), bs(0x00, 0x02, 0x05, 0x61)), "runs past the end"},
		{"shared memory", mod(types, imports, sec(5, vecOf(bs(0x03, 0x01, 0x01)))), "limits flags 0x03"},
		{"bad mutability", mod(types, imports, sec(6, vecOf(cat(bs(tI32, 2), i32Const(0), end)))), "mutability"},
		{"bad element flags", mod(types, imports, sec(9, vecOf(bs(0x08)))), "element segment flags 8"},
		{"bad element kind", mod(types, imports, sec(9, vecOf(bs(0x01, 0x01, 0x00)))), "element kind"},
		{"bad data flags", mod(types, imports, sec(11, vecOf(bs(0x03)))), "data segment flags 3"},
		{"data past end", mod(types, imports, sec(11, vecOf(cat(bs(0x01), uleb(9), bs(1))))), "runs past the end"},
		{"too many locals", mod(types, imports, funcs, sec(10, vecOf(
			body([][2]uint32{{math.MaxUint32, tI32}, {1, tI32}})))), "more than 2^32-1 locals"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, tc.wasm, pollOpt, tc.want)
		})
	}
}

// TestMalformedOffset checks that the offset of a malformed module's error
// is where the problem is.
func TestMalformedOffset(t *testing.T) {
	wasm := loopModule()
	i := bytes.Index(wasm, countLoop(1, 0))
	bad := bytes.Clone(wasm)
	bad[i+len(loop(tEmpty))] = 0x27 // the first instruction of the loop body
	wantError(t, bad, pollOpt, fmt.Sprintf("unsupported opcode 0x27 (unknown) at offset %d", i+2))
}
