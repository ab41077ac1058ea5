package meter

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/api"
)

// bulkOpt is pollOpt with an interval and a BulkBytes.
func bulkOpt(interval, bulkBytes uint32) Options {
	return Options{Module: "ptcx", Name: "poll", Interval: interval, BulkBytes: bulkBytes}
}

// modelPolls runs the counter of a loop whose header runs k times, each
// iteration then running a bulk-memory instruction charged c iterations:
// each step takes its amount away from the counter and, if that leaves it
// at zero or less, polls and resets it to interval.
func modelPolls(k, interval, c uint64) uint64 {
	counter, polls := int64(interval), uint64(0)
	step := func(n uint64) {
		if counter -= int64(n); counter <= 0 {
			counter = int64(interval)
			polls++
		}
	}
	for range k {
		step(1)
		step(c)
	}
	return polls
}

// wantPolls is modelPolls in closed form. With u = 1+c units an iteration,
// the counter starts an iteration at interval (at the start, or after a
// poll at a charge) or at interval-c (after a poll at a header):
//
//   - c = 0: only the headers count: k/interval polls.
//   - interval = 1: every header polls, and so does every charge if c > 0.
//   - otherwise, from interval, q = (interval-1)/u iterations go by
//     without a poll. If (interval-1)%u != 0, the next one polls at its
//     charge and the counter is back at interval: a poll every q+1
//     iterations. Else (q >= 1) it polls at its header, and the counter is
//     interval-c = (q-1)u + 1 + 1 after its charge: q-1 quiet iterations,
//     then one that polls at its charge, back at interval. Two polls every
//     2q+1 iterations, at the (q+1)th and the (2q+1)th.
func wantPolls(k, interval, c uint64) uint64 {
	switch {
	case c == 0:
		return k / interval
	case interval == 1:
		return 2 * k
	}
	u := 1 + c
	q, rem := (interval-1)/u, (interval-1)%u
	if rem != 0 {
		return k / (q + 1)
	}
	cycle := 2*q + 1
	polls := 2 * (k / cycle)
	if k%cycle >= q+1 {
		polls++
	}
	return polls
}

// TestPollFormula checks wantPolls against the model.
func TestPollFormula(t *testing.T) {
	for interval := uint64(1); interval <= 40; interval++ {
		for c := uint64(0); c <= 50; c++ {
			for k := uint64(0); k <= 130; k++ {
				if got, want := wantPolls(k, interval, c), modelPolls(k, interval, c); got != want {
					t.Fatalf("k=%d interval=%d c=%d: formula %d, model %d", k, interval, c, got, want)
				}
			}
		}
	}
}

// bulkDst is where the bulk-memory modules write.
const bulkDst = 8192

// bulkModule is a module importing ptcx.poll and exporting its memory
// (one page) and run(k, n) -> i32: a loop whose header runs max(k, 1)
// times, each iteration running one bulk-memory instruction of n bytes
// writing at bulkDst, first thing after the loop header's operands:
// memory.fill with value i+0xaa, memory.copy from 0 (16 bytes of data
// there) or memory.init from a passive segment of 5000 bytes.
func bulkModule(op string) []byte {
	// Locals: k(0) n(1) i(2).
	var instr []byte
	switch op {
	case "fill":
		instr = cat(i32Const(bulkDst), localGet(2), i32Const(0xaa), i32Add, localGet(1), memoryFill())
	case "copy":
		instr = cat(i32Const(bulkDst), i32Const(0), localGet(1), memoryCopy())
	case "init":
		instr = cat(i32Const(bulkDst), i32Const(0), localGet(1), memoryInit(1))
	default:
		panic(op)
	}
	code := cat(
		loop(tEmpty),
		instr,
		localGet(2), i32Const(1), i32Add, localTee(2),
		localGet(0), i32LtU, brIf(0),
		end,
		localGet(2),
	)
	seg := make([]byte, 5000)
	for i := range seg {
		seg[i] = byte(i*7 + 1)
	}
	return mod(
		sec(1, vecOf(fn(nil, bs(tI32)), fn(bs(tI32, tI32), bs(tI32)))),
		sec(2, vecOf(importFunc("ptcx", "poll", 0))),
		sec(3, vecOf(uleb(1))),
		sec(5, vecOf(bs(0x00, 0x01))),
		sec(7, vecOf(export("run", 0, 1), export("mem", 2, 0))),
		sec(12, uleb(2)),
		sec(10, vecOf(body([][2]uint32{{1, tI32}}, code))),
		sec(11, vecOf(
			cat(bs(0x00), i32Const(0), end, str("0123456789abcdef")),
			cat(bs(0x01), uleb(uint64(len(seg))), seg),
		)),
	)
}

// TestBulkPolls runs a loop of k iterations, each doing one memory.fill,
// memory.copy or memory.init of n bytes, metered with an interval and a
// BulkBytes: it polls exactly wantPolls(k, interval, n>>log2(BulkBytes))
// times, computes what the plain module computes and leaves the same
// memory.
func TestBulkPolls(t *testing.T) {
	cases := []struct{ interval, bulkBytes, n uint32 }{
		{10, 4096, 100},       // c = 0: the headers alone
		{10, 4096, 4095},      // c = 0, just
		{10, 4096, 4096},      // c = 1, u = 2: q = 4, rem 1: every 5 iterations
		{10, 16, 100},         // c = 6, u = 7: q = 1, rem 2: every 2
		{10, 4, 8},            // c = 2, u = 3: q = 3, rem 0: 2 polls every 7
		{7, 2, 4},             // c = 2, u = 3: q = 2, rem 0: 2 polls every 5
		{100, 8, 240},         // c = 30, u = 31: q = 3, rem 6: every 4
		{1, 2, 3},             // interval 1: 2 polls an iteration
		{1, 4096, 100},        // interval 1, c = 0: 1 poll an iteration
		{5, 2, 100},           // c = 50 >= interval: 1 poll an iteration
		{1000, 2, 4000},       // c = 2000 >= interval
		{10000, 4096, 5000},   // c = 1: 1 poll every 5000 iterations
		{3, 1 << 31, 5000},    // c = 0, the largest BulkBytes
		{math.MaxInt32, 2, 0}, // nothing
	}
	for _, op := range []string{"fill", "copy", "init"} {
		wasm := bulkModule(op)
		for _, tc := range cases {
			out, st := meterOpt(t, wasm, bulkOpt(tc.interval, tc.bulkBytes))
			var want stats
			switch op {
			case "fill":
				want.fills = 1
			case "copy":
				want.copies = 1
			case "init":
				want.inits = 1
			}
			if st.fills != want.fills || st.copies != want.copies || st.inits != want.inits || st.localBodies != 1 || st.loops != 1 {
				t.Fatalf("%s: stats %+v", op, st)
			}
			// run(k, n): the new local is 3, after 2 parameters and 1 local.
			if !bytes.Contains(out, expectedCharge(st.global, st.poll, 3, tc.bulkBytes, tc.interval)) {
				t.Fatalf("%s: no charge using local 3", op)
			}
			h := newHost(t, false)
			for _, k := range []uint32{1, 2, 3, 37, 100, 1001} {
				h.polls.Store(0)
				plain, metered := h.instantiate(t, wasm), h.instantiate(t, out)
				wantRes := h.call(t, plain, "run", uint64(k), uint64(tc.n))
				if got := h.call(t, metered, "run", uint64(k), uint64(tc.n)); got[0] != wantRes[0] {
					t.Fatalf("%s %+v k=%d: run returned %d, want %d", op, tc, k, got[0], wantRes[0])
				}
				pm, _ := plain.Memory().Read(0, 1<<16)
				mm, _ := metered.Memory().Read(0, 1<<16)
				if !bytes.Equal(pm, mm) {
					t.Fatalf("%s %+v k=%d: memories differ", op, tc, k)
				}
				if op != "copy" && tc.n > 0 && pm[bulkDst] == 0 {
					t.Fatalf("%s: the plain module wrote nothing", op)
				}
				c := uint64(tc.n) >> bitsOf(tc.bulkBytes)
				if got, want := uint64(h.polls.Load()), wantPolls(uint64(k), uint64(tc.interval), c); got != want {
					t.Errorf("%s interval=%d bulkBytes=%d n=%d k=%d: %d polls, want %d", op, tc.interval, tc.bulkBytes, tc.n, k, got, want)
				}
			}
		}
	}
}

// codeSection returns the contents of the module's code section.
func codeSection(t testing.TB, wasm []byte) []byte {
	t.Helper()
	for _, s := range sections(t, wasm) {
		if s.id == 10 {
			return s.contents
		}
	}
	t.Fatal("no code section")
	return nil
}

// bitsOf returns log2 of a power of two.
func bitsOf(p uint32) uint {
	n := uint(0)
	for p > 1 {
		p >>= 1
		n++
	}
	return n
}

// TestBulkChargedFirst checks that the charge comes before the instruction:
// a poll that stops the guest at the first charge (which exceeds the
// counter) leaves the memory the instruction would have written untouched.
func TestBulkChargedFirst(t *testing.T) {
	for _, op := range []string{"fill", "copy", "init"} {
		out, _ := meterOpt(t, bulkModule(op), bulkOpt(3, 2))
		h := newHost(t, false)
		h.onPoll = func(context.Context) { panic(errStopped) }
		m := h.instantiate(t, out)
		// The header takes the counter from 3 to 2; the charge of
		// 64>>1 = 32 takes it below zero and polls.
		_, err := m.ExportedFunction("run").Call(h.ctx, 1, 64)
		if !errors.Is(err, errStopped) {
			t.Fatalf("%s: run returned %v, want the poll's error", op, err)
		}
		if n := h.polls.Load(); n != 1 {
			t.Fatalf("%s: %d polls", op, n)
		}
		got, _ := m.Memory().Read(bulkDst, 64)
		if !bytes.Equal(got, make([]byte, 64)) {
			t.Fatalf("%s: the instruction ran before the poll: % x", op, got)
		}
		// Uninstrumented, it writes there.
		h2 := newHost(t, false)
		p := h2.instantiate(t, bulkModule(op))
		h2.call(t, p, "run", 1, 64)
		if got, _ := p.Memory().Read(bulkDst, 64); bytes.Equal(got, make([]byte, 64)) {
			t.Fatalf("%s: the plain module wrote nothing", op)
		}
	}
}

// chargeThenLoop is a module exporting fill(n), one memory.fill of n bytes
// at bulkDst, and run(k), a loop whose header runs max(k, 1) times.
func chargeThenLoop() []byte {
	return mod(
		sec(1, vecOf(fn(nil, bs(tI32)), fn(bs(tI32), bs(tI32)), fn(bs(tI32), nil))),
		sec(2, vecOf(importFunc("ptcx", "poll", 0))),
		sec(3, vecOf(uleb(1), uleb(2))),
		sec(5, vecOf(bs(0x00, 0x01))),
		sec(7, vecOf(export("run", 0, 1), export("fill", 0, 2))),
		sec(10, vecOf(
			body([][2]uint32{{1, tI32}}, countLoop(1, 0), localGet(1)),
			body(nil, i32Const(bulkDst), i32Const(1), localGet(0), memoryFill()),
		)),
	)
}

// TestBigCharge checks charges that take the counter far below zero, which
// an i32.eqz test would miss: the charge polls once, right away, and
// resets the counter, so the loop headers after it count a whole interval
// again; and charges at the limits of the i32 counter.
func TestBigCharge(t *testing.T) {
	out, st := meterOpt(t, chargeThenLoop(), bulkOpt(1000, 2))
	if st.fills != 1 || st.localBodies != 1 {
		t.Fatalf("stats %+v", st)
	}
	h := newHost(t, false)
	m := h.instantiate(t, out)
	h.call(t, m, "fill", 50000) // 25000 iterations: the counter goes from 1000 to -24000
	if n := h.polls.Load(); n != 1 {
		t.Fatalf("%d polls after a charge of 25 intervals, want 1", n)
	}
	h.call(t, m, "run", 999)
	if n := h.polls.Load(); n != 1 {
		t.Fatalf("%d polls after 999 more loop iterations, want 1", n)
	}
	h.call(t, m, "run", 1)
	if n := h.polls.Load(); n != 2 {
		t.Fatalf("%d polls after 1000 more loop iterations, want 2", n)
	}
	h.call(t, m, "fill", 1998) // 999 iterations: the counter goes from 1000 to 1
	if n := h.polls.Load(); n != 2 {
		t.Fatalf("%d polls after a charge of 999, want 2", n)
	}
	h.call(t, m, "fill", 2) // 1: the counter reaches 0
	if n := h.polls.Load(); n != 3 {
		t.Fatalf("%d polls after a charge of 1 more, want 3", n)
	}

	// Limits: the largest charge (2^31-1, n = 2^32-1 with BulkBytes 2),
	// with the counter at 1 and at 2^31-1, polls (and the fill traps: it
	// is out of bounds); with BulkBytes 2^31 it is 1.
	for _, tc := range []struct {
		interval, bulkBytes uint32
		n                   uint32
		polls               int64
	}{
		{1, 2, math.MaxUint32, 1},
		{math.MaxInt32, 2, math.MaxUint32, 1},
		{math.MaxInt32, 2, math.MaxUint32 - 2, 0}, // 2^31-2: the counter goes to 1
		{1, 1 << 31, math.MaxUint32, 1},
		{2, 1 << 31, math.MaxUint32, 0},
		{2, 1 << 31, 1<<31 - 1, 0},
	} {
		out, _ := meterOpt(t, chargeThenLoop(), bulkOpt(tc.interval, tc.bulkBytes))
		h := newHost(t, false)
		m := h.instantiate(t, out)
		_, err := m.ExportedFunction("fill").Call(h.ctx, uint64(tc.n))
		if err == nil || !strings.Contains(err.Error(), "out of bounds") {
			t.Fatalf("%+v: fill returned %v, want out of bounds", tc, err)
		}
		if n := h.polls.Load(); n != tc.polls {
			t.Errorf("%+v: %d polls, want %d", tc, n, tc.polls)
		}
	}
}

// TestBulkLocalIndex checks where the new local goes: after the parameters
// and the declared locals, whatever their types and however the
// declarations are encoded.
func TestBulkLocalIndex(t *testing.T) {
	fill16 := cat(i32Const(bulkDst), localGet(0), i32Const(16), memoryFill())
	// a(x i32, y i64) -> i32, locals f64(2) i32(3) i64(4): $t is 5. With 4,
	// local.set would store an i32 in an i64: the module would not
	// validate.
	a := body([][2]uint32{{1, 0x7c}, {1, tI32}, {1, tI64}}, fill16, localGet(0))
	// b(p i32, q f32) -> i32, locals i64(2, 3) i32(4): $t is 5. It keeps p
	// in local 4 across a memory.fill of 100 bytes; with $t = 4 it would
	// return 100.
	b := body([][2]uint32{{2, tI64}, {1, tI32}}, localGet(0), localSet(4),
		i32Const(bulkDst), i32Const(9), i32Const(100), memoryFill(), localGet(4))
	// c() -> (): no parameter or local: $t is 0.
	c := body(nil, i32Const(bulkDst), i32Const(1), i32Const(3), memoryFill())
	// d(x i32) -> i32, as a with a declaration count of 3 in two bytes:
	// the output re-encodes it in one.
	dBody := cat(bs(0x83, 0x00, 1, 0x7c, 1, tI32, 1, tI64), fill16, localGet(0), end)
	d := cat(uleb(uint64(len(dBody))), dBody)
	// e(x i32) -> i32: a loop of type [i32 i32 i32] -> [] whose first
	// instruction is a memory.fill, so that the check and the charge go at
	// the same offset, and a memory.fill in unreachable code: $t is 1.
	e := body(nil,
		i32Const(bulkDst), i32Const(5), i32Const(4), loop(0x04), memoryFill(), end,
		bs(0x02, 0x40), bs(0x0c, 0x00), memoryFill(), end, // block br 0 memory.fill end
		localGet(0))
	wasm := mod(
		sec(1, vecOf(
			fn(nil, bs(tI32)),
			fn(bs(tI32, tI64), bs(tI32)),
			fn(bs(tI32, 0x7d), bs(tI32)),
			fn(nil, nil),
			fn(bs(tI32, tI32, tI32), nil),
			fn(bs(tI32), bs(tI32)),
		)),
		sec(2, vecOf(importFunc("ptcx", "poll", 0))),
		sec(3, vecOf(uleb(1), uleb(2), uleb(3), uleb(5), uleb(5))),
		sec(5, vecOf(bs(0x00, 0x01))),
		sec(7, vecOf(export("a", 0, 1), export("b", 0, 2), export("c", 0, 3), export("d", 0, 4), export("e", 0, 5))),
		sec(10, vecOf(a, b, c, d, e)),
	)
	out, st := meterOpt(t, wasm, bulkOpt(2, 2))
	if st.fills != 6 || st.localBodies != 5 || st.loops != 1 {
		t.Fatalf("stats %+v", st)
	}
	bb := bodies(t, codeSection(t, out))
	for i, want := range []struct {
		local uint32
		decls []byte
	}{
		{5, bs(4, 1, 0x7c, 1, tI32, 1, tI64, 1, tI32)},
		{5, bs(3, 2, tI64, 1, tI32, 1, tI32)},
		{0, bs(1, 1, tI32)},
		{4, bs(4, 1, 0x7c, 1, tI32, 1, tI64, 1, tI32)},
		{1, bs(1, 1, tI32)},
	} {
		if !bytes.HasPrefix(bb[i], want.decls) {
			t.Errorf("body %d: locals % x, want % x", i, bb[i][:len(want.decls)], want.decls)
		}
		if !bytes.Contains(bb[i], expectedCharge(st.global, st.poll, want.local, 2, 2)) {
			t.Errorf("body %d: no charge with local %d", i, want.local)
		}
	}
	// e's loop: the check, then the charge.
	check := expectedCheck(st.global, st.poll, 2, true)
	if !bytes.Contains(bb[4], cat(loop(0x04), check, expectedCharge(st.global, st.poll, 1, 2, 2), memoryFill())) {
		t.Error("e: the loop is not followed by the check and the charge")
	}
	h := newHost(t, false)
	m := h.instantiate(t, out)
	if got := h.call(t, m, "a", 3, 0); got[0] != 3 {
		t.Errorf("a returned %d", got[0])
	}
	if got := h.call(t, m, "b", 12345, 0); got[0] != 12345 {
		t.Errorf("b returned %d, want 12345", got[0])
	}
	h.call(t, m, "c")
	if got := h.call(t, m, "d", 7); got[0] != 7 {
		t.Errorf("d returned %d", got[0])
	}
	if got := h.call(t, m, "e", 8); got[0] != 8 {
		t.Errorf("e returned %d", got[0])
	}
	// The counter, from 2: a charges 8 (poll, 2), b 50 (poll, 2), c 1 (1),
	// d 8 (poll, 2), e's loop header 1 (1) and its charge 2 (poll, 2).
	if got := h.polls.Load(); got != 4 {
		t.Errorf("%d polls, want 4", got)
	}
	// e filled 4 bytes with 5, after d filled 16 with 7.
	if got, _ := m.Memory().Read(bulkDst, 16); !bytes.Equal(got, cat(bytes.Repeat(bs(5), 4), bytes.Repeat(bs(7), 12))) {
		t.Errorf("memory % x", got)
	}
}

// TestBulkUntouchedBodies checks that bodies without bulk-memory
// instructions keep their locals, and are byte for byte the same if they
// have no loop either.
func TestBulkUntouchedBodies(t *testing.T) {
	withBulk := body([][2]uint32{{1, tI32}}, i32Const(0), i32Const(0), i32Const(4), memoryFill(), localGet(0))
	plain := body([][2]uint32{{2, tI64}, {1, tI32}}, i32Const(0), bs(0x28, 0x02, 0x00), localSet(3), localGet(3)) // i32.load
	looping := body([][2]uint32{{1, tI32}, {3, tI64}}, countLoop(1, 0), localGet(1))
	wasm := mod(
		sec(1, vecOf(fn(nil, bs(tI32)), fn(bs(tI32), bs(tI32)))),
		sec(2, vecOf(importFunc("ptcx", "poll", 0))),
		sec(3, vecOf(uleb(1), uleb(1), uleb(1))),
		sec(5, vecOf(bs(0x00, 0x01))),
		sec(10, vecOf(withBulk, plain, looping)),
	)
	out, st := meterOpt(t, wasm, bulkOpt(10, 64))
	if st.localBodies != 1 || st.fills != 1 || st.loops != 1 {
		t.Fatalf("stats %+v", st)
	}
	code := codeSection(t, out)
	if !bytes.Contains(code, plain) {
		t.Error("the body without bulk-memory instructions or loops changed")
	}
	bb := bodies(t, code)
	if want := bs(2, 1, tI32, 3, tI64); !bytes.HasPrefix(bb[2], want) || readLocals(t, bb[2]).code != len(want) {
		t.Errorf("the loop's body has locals % x", bb[2][:8])
	}
	h := newHost(t, false)
	if _, err := h.r.CompileModule(h.ctx, out); err != nil {
		t.Fatal(err)
	}
}

// TestBulkBytes checks the values BulkBytes takes, and that 0 changes
// nothing: the same output as before BulkBytes existed.
func TestBulkBytes(t *testing.T) {
	for _, b := range []uint32{3, 5, 6, 12, 4097, 1<<31 + 1, math.MaxUint32} {
		wantError(t, loopModule(), bulkOpt(10, b), "BulkBytes", fmt.Sprint(b), "not a power of two")
	}
	// 1: n>>0 can be 2^31 or more, which would wrap the counter around.
	wantError(t, loopModule(), bulkOpt(10, 1), "BulkBytes", "at least 2")
	for shift := 1; shift < 32; shift++ {
		meterOpt(t, bulkModule("fill"), bulkOpt(10, 1<<shift))
	}
	// Outputs of the package before BulkBytes.
	for _, tc := range []struct {
		wasm     []byte
		interval uint32
		golden   string
	}{
		{loopModule(), 7, "0061736d01000000010a026000017f60017f017f020d01047074637804706f6c6c0000030201010606017f0141070b0707010372756e00010a2b012901017f0340230041016b240023004504404107240010001a0b200141016a22012000490d000b20010b00110c707463782e6d65746572656407000000"},
		{tightLoop(), 10000, "0061736d01000000010a026000017f60017f017f020d01047074637804706f6c6c0000030201010608017f014190ce000b0707010372756e00010a34013201027f0340230041016b240023004504404190ce00240010001a0b200220016a2102200141016a22012000490d000b20020b00110c707463782e6d65746572656410270000"},
	} {
		out, _ := meterOpt(t, tc.wasm, bulkOpt(tc.interval, 0))
		if got := hex.EncodeToString(out); got != tc.golden {
			t.Errorf("output %s, want %s", got, tc.golden)
		}
	}
	// With 0, bulk-memory instructions are left alone (checkGrowth sees
	// no charge and no new local), and so are modules the charges would
	// refuse.
	for _, op := range []string{"fill", "copy", "init"} {
		_, st := meterOpt(t, bulkModule(op), bulkOpt(10, 0))
		if st.bulk() != 0 || st.localBodies != 0 {
			t.Fatalf("stats %+v", st)
		}
	}
	meterOpt(t, manyLocals(1, math.MaxUint32-1), bulkOpt(10, 0))
	meterOpt(t, badFuncType(), bulkOpt(10, 0))
}

// manyLocals is a module with a function of params i32 parameters and
// locals i32 locals that does a memory.fill.
func manyLocals(params int, locals uint32) []byte {
	return mod(
		sec(1, vecOf(fn(nil, bs(tI32)), fn(bytes.Repeat(bs(tI32), params), nil))),
		sec(2, vecOf(importFunc("ptcx", "poll", 0))),
		sec(3, vecOf(uleb(1))),
		sec(5, vecOf(bs(0x00, 0x01))),
		sec(10, vecOf(body([][2]uint32{{locals, tI32}}, i32Const(0), i32Const(0), i32Const(4), memoryFill()))),
	)
}

// badFuncType is a module whose function, which does a memory.fill, has a
// type index out of range.
func badFuncType() []byte {
	return mod(
		sec(1, vecOf(fn(nil, bs(tI32)))),
		sec(2, vecOf(importFunc("ptcx", "poll", 0))),
		sec(3, vecOf(uleb(9))),
		sec(5, vecOf(bs(0x00, 0x01))),
		sec(10, vecOf(body(nil, i32Const(0), i32Const(0), i32Const(4), memoryFill()))),
	)
}

// TestBulkLocalLimits checks that a function that cannot take one more
// local is an error: its parameters and locals, with the new one, must
// number at most 2^32-1, so that its index fits in a u32. wazero itself
// only limits the declared locals to 2^32-1.
func TestBulkLocalLimits(t *testing.T) {
	wantError(t, manyLocals(1, math.MaxUint32-1), bulkOpt(10, 4096), "function 1", "4294967295 parameters and locals")
	wantError(t, manyLocals(0, math.MaxUint32), bulkOpt(10, 4096), "function 1", "4294967295 parameters and locals")
	wantError(t, manyLocals(3, math.MaxUint32-2), bulkOpt(10, 4096), "function 1", "4294967296 parameters and locals")
	// The largest that fit: the new local is 2^32-2.
	out, _ := meterOpt(t, manyLocals(0, math.MaxUint32-1), bulkOpt(10, 4096))
	if !bytes.Contains(out, localSet(math.MaxUint32-1)) {
		t.Fatal("no local.set 2^32-2")
	}
	meterOpt(t, manyLocals(2, math.MaxUint32-3), bulkOpt(10, 4096))
	wantError(t, badFuncType(), bulkOpt(10, 4096), "function 1", "type index 9")
}

// TestBulkPollStops checks that a poll failing at a charge stops an endless
// loop of bulk-memory instructions, and that the instance goes on charging
// after it.
func TestBulkPollStops(t *testing.T) {
	out, _ := meterOpt(t, bulkModule("copy"), bulkOpt(100, 16))
	h := newHost(t, false)
	h.onPoll = func(context.Context) {
		if h.polls.Load() == 20 {
			panic(errStopped)
		}
	}
	m := h.instantiate(t, out)
	// 2^32-1 iterations of a loop header and a charge of 1000>>4 = 62:
	// the counter, from 100, polls at the second charge, then at every
	// second charge: (100-1-62) = 37, 37-1-62 < 0.
	_, err := m.ExportedFunction("run").Call(h.ctx, api.EncodeI32(-1), 1000)
	if !errors.Is(err, errStopped) {
		t.Fatalf("run returned %v, want the poll's error", err)
	}
	if got := h.polls.Load(); got != 20 {
		t.Fatalf("%d polls", got)
	}
	h.call(t, m, "run", 10, 1000)
	if got := h.polls.Load(); got != 25 {
		t.Fatalf("%d polls after 10 more iterations, want 25", got)
	}
}
