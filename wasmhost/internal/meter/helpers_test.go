package meter

import (
	"bytes"
	"context"
	"math"
	"sync/atomic"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// host is a wazero runtime with a "ptcx" host module whose poll import
// counts its calls.
type host struct {
	ctx   context.Context
	r     wazero.Runtime
	polls atomic.Int64
	// onPoll, when set, runs in every poll call.
	onPoll func(ctx context.Context)
}

// compiled is shared by the tests' runtimes, so that a module (the guest,
// plain or metered the same way) is compiled once per test binary: the
// compiler is slow under the race detector.
var compiled = wazero.NewCompilationCache()

// newHost returns a compiler runtime with the ptcx module instantiated.
func newHost(t testing.TB, closeOnContextDone bool) *host {
	t.Helper()
	h := &host{ctx: context.Background()}
	cfg := wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(closeOnContextDone).WithCompilationCache(compiled)
	h.r = wazero.NewRuntimeWithConfig(h.ctx, cfg)
	t.Cleanup(func() { _ = h.r.Close(h.ctx) })
	_, err := h.r.NewHostModuleBuilder("ptcx").NewFunctionBuilder().
		WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) {
			h.polls.Add(1)
			if h.onPoll != nil {
				h.onPoll(ctx)
			}
			stack[0] = 0
		}), nil, []api.ValueType{api.ValueTypeI32}).Export("poll").
		Instantiate(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// instantiate compiles and instantiates wasm under a unique name.
func (h *host) instantiate(t testing.TB, wasm []byte) api.Module {
	t.Helper()
	m, err := h.r.InstantiateWithConfig(h.ctx, wasm, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	return m
}

// call calls export name of m with args and returns its results.
func (h *host) call(t testing.TB, m api.Module, name string, args ...uint64) []uint64 {
	t.Helper()
	f := m.ExportedFunction(name)
	if f == nil {
		t.Fatalf("no export %q", name)
	}
	res, err := f.Call(h.ctx, args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// meter instruments wasm with interval and no bulk-memory charge, checks
// the output against the input with checkGrowth, and returns it.
func meter(t testing.TB, wasm []byte, interval uint32) ([]byte, stats) {
	t.Helper()
	return meterOpt(t, wasm, Options{Module: "ptcx", Name: "poll", Interval: interval})
}

// meterOpt instruments wasm with opt, checks the output against the input
// with checkGrowth, and returns it.
func meterOpt(t testing.TB, wasm []byte, opt Options) ([]byte, stats) {
	t.Helper()
	in := bytes.Clone(wasm)
	out, st, err := instrument(wasm, opt)
	if err != nil {
		t.Fatalf("instrument: %v", err)
	}
	if !bytes.Equal(in, wasm) {
		t.Fatal("instrument modified its input")
	}
	checkGrowth(t, wasm, out, st, opt)
	return out, st
}

// rawSection is a section as the test's own walker sees it.
type rawSection struct {
	id       byte
	contents []byte
	raw      []byte // id, size and contents
}

// readU32 decodes an unsigned LEB128 number at b[*pos], for the tests' own
// walkers; it fails the test on bad input.
func readU32(t testing.TB, b []byte, pos *int) uint32 {
	t.Helper()
	var v uint32
	for shift := 0; ; shift += 7 {
		if *pos >= len(b) || shift > 28 {
			t.Fatalf("bad LEB128 at %d", *pos)
		}
		c := b[*pos]
		*pos++
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
}

// sections splits a module into its sections.
func sections(t testing.TB, wasm []byte) []rawSection {
	t.Helper()
	var out []rawSection
	pos := 8
	for pos < len(wasm) {
		start := pos
		id := wasm[pos]
		pos++
		n := int(readU32(t, wasm, &pos))
		out = append(out, rawSection{id: id, contents: wasm[pos : pos+n], raw: wasm[start : pos+n]})
		pos += n
	}
	return out
}

// bodies splits the contents of a code section into function bodies.
func bodies(t testing.TB, code []byte) [][]byte {
	t.Helper()
	pos := 0
	n := readU32(t, code, &pos)
	var out [][]byte
	for i := uint32(0); i < n; i++ {
		size := int(readU32(t, code, &pos))
		out = append(out, code[pos:pos+size])
		pos += size
	}
	if pos != len(code) {
		t.Fatalf("code section: %d bytes after the bodies", len(code)-pos)
	}
	return out
}

// checkGrowth checks that out is in with exactly the expected changes: the
// same sections in the same order, each custom or untouched section byte for
// byte; one more global whose index and initial value are as st says; every
// function body equal to the input's once the inserted checks and charges
// are removed, with st.loops checks and st.bulk() charges in all, each
// charge right before a memory.init, memory.copy or memory.fill and using
// a new i32 local declared last; the ptcx.metered section last.
func checkGrowth(t testing.TB, in, out []byte, st stats, opt Options) {
	t.Helper()
	interval := opt.Interval
	check := expectedCheck(st.global, st.poll, interval, opt.BulkBytes != 0)
	if st.checkLen != len(check) {
		t.Fatalf("stats say %d bytes per check, the test's encoding has %d", st.checkLen, len(check))
	}
	if opt.BulkBytes == 0 && (st.bulk() != 0 || st.localBodies != 0) {
		t.Fatalf("stats %+v: charges without BulkBytes", st)
	}
	if !bytes.Equal(out[:8], in[:8]) {
		t.Fatalf("header changed: % x", out[:8])
	}
	is, os := sections(t, in), sections(t, out)
	last := os[len(os)-1]
	contents := le32(interval)
	if opt.BulkBytes != 0 {
		contents = cat(contents, le32(opt.BulkBytes))
	}
	if wantLast := customSec("ptcx.metered", contents); !bytes.Equal(last.raw, wantLast) {
		t.Fatalf("last section is % x, want % x", last.raw, wantLast)
	}
	os = os[:len(os)-1]
	newGlobal := cat(bs(tI32, 1), i32Const(int32(interval)), end)
	hadGlobal := false
	for _, s := range is {
		hadGlobal = hadGlobal || s.id == 6
	}
	if !hadGlobal {
		// Find the section created and check it is in order.
		if len(os) != len(is)+1 {
			t.Fatalf("%d sections out for %d in, want one more", len(os), len(is))
		}
		at := -1
		for i, s := range os {
			if s.id == 6 {
				at = i
			}
		}
		if at < 0 {
			t.Fatal("no global section in the output")
		}
		if want := cat(uleb(1), newGlobal); !bytes.Equal(os[at].contents, want) {
			t.Fatalf("new global section % x, want % x", os[at].contents, want)
		}
		for _, s := range os[:at] {
			if s.id != 0 && rank(s.id) > rank(6) {
				t.Fatalf("section %d before the global section", s.id)
			}
		}
		for _, s := range os[at+1:] {
			if s.id != 0 && rank(s.id) < rank(6) {
				t.Fatalf("section %d after the global section", s.id)
			}
		}
		os = append(os[:at:at], os[at+1:]...)
	}
	if len(os) != len(is) {
		t.Fatalf("%d sections out for %d in", len(os)+1, len(is))
	}
	loops, charges, localBodies := 0, 0, 0
	for i := range is {
		a, b := is[i], os[i]
		if a.id != b.id {
			t.Fatalf("section %d: id %d became %d", i, a.id, b.id)
		}
		switch a.id {
		case 6:
			pa, pb := 0, 0
			na, nb := readU32(t, a.contents, &pa), readU32(t, b.contents, &pb)
			if nb != na+1 || !bytes.Equal(b.contents[pb:], cat(a.contents[pa:], newGlobal)) {
				t.Fatalf("global section % x became % x", a.contents, b.contents)
			}
		case 10:
			ba, bb := bodies(t, a.contents), bodies(t, b.contents)
			if len(ba) != len(bb) {
				t.Fatalf("%d bodies became %d", len(ba), len(bb))
			}
			var params []uint32 // per defined function, read when needed
			for j := range ba {
				la, lb := readLocals(t, ba[j]), readLocals(t, bb[j])
				codeA, codeB := ba[j][la.code:], bb[j][lb.code:]
				switch {
				case lb.decls == la.decls && bytes.Equal(bb[j][:lb.code], ba[j][:la.code]):
					// No new local: no charge either (checked below, as
					// the stripped body must equal the input's).
				case opt.BulkBytes != 0 && lb.decls == la.decls+1 &&
					bytes.Equal(bb[j][lb.groups:lb.code], cat(ba[j][la.groups:la.code], bs(1, tI32))):
					if params == nil {
						params = funcParams(t, in)
					}
					local := uint64(params[j]) + la.locals
					if local >= 1<<32-1 {
						t.Fatalf("body %d: local %d", j, local)
					}
					charge := expectedCharge(st.global, st.poll, uint32(local), opt.BulkBytes, interval)
					if bytes.Contains(codeA, charge) {
						t.Fatalf("body %d already holds the charge", j)
					}
					n := 0
					for rest := codeB; ; n++ {
						k := bytes.Index(rest, charge)
						if k < 0 {
							break
						}
						rest = rest[k+len(charge):]
						pos := 1
						if len(rest) < 2 || rest[0] != 0xfc {
							t.Fatalf("body %d: a charge is not followed by a 0xfc instruction", j)
						}
						if sub := readU32(t, rest, &pos); sub != 8 && sub != 10 && sub != 11 {
							t.Fatalf("body %d: a charge is followed by 0xfc %d", j, sub)
						}
					}
					if n == 0 {
						t.Fatalf("body %d: a new local and no charge", j)
					}
					charges += n
					localBodies++
					codeB = bytes.ReplaceAll(codeB, charge, nil)
				default:
					t.Fatalf("body %d: locals % x became % x", j, ba[j][:la.code], bb[j][:lb.code])
				}
				loops += bytes.Count(codeB, check)
				if stripped := bytes.ReplaceAll(codeB, check, nil); !bytes.Equal(stripped, codeA) {
					t.Fatalf("body %d differs beyond the checks and charges", j)
				}
				if bytes.Contains(codeA, check) {
					t.Fatalf("body %d already holds the check", j)
				}
			}
		default:
			if !bytes.Equal(a.raw, b.raw) {
				t.Fatalf("section %d (id %d) changed", i, a.id)
			}
		}
	}
	if loops != st.loops {
		t.Fatalf("found %d checks, stats say %d loops", loops, st.loops)
	}
	if charges != st.bulk() || localBodies != st.localBodies {
		t.Fatalf("found %d charges in %d bodies with a new local, stats say %d in %d", charges, localBodies, st.bulk(), st.localBodies)
	}
}

// le32 encodes v as a little-endian u32.
func le32(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }

// localDecls is what the tests' walker reads of a body's local declarations.
type localDecls struct {
	decls  uint32 // number of declarations
	groups int    // offset of the first declaration
	code   int    // offset of the first instruction
	locals uint64 // locals declared
}

// readLocals reads the local declarations at the start of body.
func readLocals(t testing.TB, body []byte) localDecls {
	t.Helper()
	pos := 0
	var l localDecls
	l.decls = readU32(t, body, &pos)
	l.groups = pos
	for i := uint32(0); i < l.decls; i++ {
		l.locals += uint64(readU32(t, body, &pos))
		pos++ // a one-byte value type
	}
	l.code = pos
	return l
}

// funcParams returns the number of parameters of each function the module
// defines, from its type and function sections.
func funcParams(t testing.TB, wasm []byte) []uint32 {
	t.Helper()
	var types, out []uint32
	for _, s := range sections(t, wasm) {
		pos := 0
		switch s.id {
		case 1:
			for n := readU32(t, s.contents, &pos); n > 0; n-- {
				pos++ // 0x60
				params := readU32(t, s.contents, &pos)
				pos += int(params) // one byte each
				pos += int(readU32(t, s.contents, &pos))
				types = append(types, params)
			}
		case 3:
			for n := readU32(t, s.contents, &pos); n > 0; n-- {
				ti := readU32(t, s.contents, &pos)
				if ti >= uint32(len(types)) {
					out = append(out, math.MaxUint32) // invalid: never given a local
					continue
				}
				out = append(out, types[ti])
			}
		}
	}
	return out
}

// rank is the order of section ids, tag (13) after memory and data count
// (12) before code.
func rank(id byte) int {
	return map[byte]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}[id]
}

// expectedCheck is the check sequence, encoded by the tests: the brief's,
// with the counter reset before the call rather than after it, and the test
// i32.const 0 i32.le_s instead of i32.eqz if leS (when bulk-memory
// instructions are charged).
func expectedCheck(g, poll, interval uint32, leS bool) []byte {
	test := bs(0x45) // i32.eqz
	if leS {
		test = cat(i32Const(0), i32LeS)
	}
	return cat(
		globalGet(g), i32Const(1), i32Sub, globalSet(g),
		globalGet(g), test, bs(0x04, 0x40),
		i32Const(int32(interval)), globalSet(g), call(poll), drop,
		end,
	)
}

// expectedCharge is the charge sequence inserted before a bulk-memory
// instruction in a body whose new local is local, encoded by the tests.
func expectedCharge(g, poll, local, bulkBytes, interval uint32) []byte {
	shift := int32(0)
	for bulkBytes > 1 {
		bulkBytes /= 2
		shift++
	}
	return cat(
		localSet(local),
		globalGet(g), localGet(local), i32Const(shift), i32ShrU, i32Sub, globalSet(g),
		globalGet(g), i32Const(0), i32LeS, bs(0x04, 0x40),
		i32Const(int32(interval)), globalSet(g), call(poll), drop,
		end,
		localGet(local),
	)
}

// everySection is a module with every kind of section (custom ones first
// and last, imported and defined globals, a table, memory, exports, an
// element and data segments with a data count), a loop, a bulk memory
// operation and typed select: a seed for fuzzing and for truncation.
func everySection() []byte {
	return mod(
		customSec("c", []byte{3, 3}),
		sec(1, vecOf(fn(nil, bs(tI32)), fn(bs(tI32), bs(tI32)), fn(bs(tI32, tI32), bs(tI32, tI32)))),
		sec(2, vecOf(importGlobal("env", "g", tI32, false), importFunc("ptcx", "poll", 0))),
		sec(3, vecOf(uleb(1), uleb(1))),
		sec(4, vecOf(bs(0x70, 0x01, 0x01, 0x02))),
		sec(5, vecOf(bs(0x00, 0x01))),
		sec(6, vecOf(cat(bs(tI32, 1), i32Const(-100000), end))),
		sec(7, vecOf(export("run", 0, 1))),
		sec(9, vecOf(cat(bs(0x00), i32Const(0), end, vecOf(uleb(1))),
			cat(bs(0x05, 0x70), vecOf(cat(bs(0xd2), uleb(2), end))))),
		sec(12, uleb(1)),
		sec(10, vecOf(
			body([][2]uint32{{1, tI32}}, countLoop(1, 0), localGet(1)),
			body([][2]uint32{{2, tI32}}, i32Const(1), i32Const(2), loop(0x02), end, drop,
				bs(0x42), sleb(-1<<40), drop, i32Const(0), bs(0x28, 0x42, 0x00, 0x03), drop,
				bs(0xfc, 0x0b, 0x00), bs(0x1c, 0x01, tI32), bs(0x0e, 0x02, 0x00, 0x00, 0x00)),
		)),
		sec(11, vecOf(cat(bs(0x00), i32Const(8), end, str("data")), cat(bs(0x01), str("x")))),
		customSec("last", []byte("end")),
	)
}
