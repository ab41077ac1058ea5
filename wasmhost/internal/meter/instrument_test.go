package meter

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// TestLoopPolls checks that a loop whose header runs k times calls poll
// floor(k/interval) times and computes what it computed before.
func TestLoopPolls(t *testing.T) {
	for _, tc := range []struct{ k, interval uint32 }{
		{1, 1}, {2, 1}, {1000, 1},
		{5, 10}, {9, 10}, {10, 10}, {11, 10}, {19, 10}, {20, 10},
		{100000, 10000}, {99999, 10000}, {123457, 1000},
		{5, math.MaxInt32},
	} {
		out, st := meter(t, loopModule(), tc.interval)
		if st.loops != 1 || st.global != 0 || st.poll != 0 {
			t.Fatalf("stats %+v", st)
		}
		h := newHost(t, false)
		m := h.instantiate(t, out)
		if got := h.call(t, m, "run", uint64(tc.k))[0]; got != uint64(tc.k) {
			t.Fatalf("k=%d interval=%d: run returned %d", tc.k, tc.interval, got)
		}
		if got, want := h.polls.Load(), int64(tc.k/tc.interval); got != want {
			t.Errorf("k=%d interval=%d: %d polls, want %d", tc.k, tc.interval, got, want)
		}
	}
}

// TestCounterPersists checks that the countdown carries over from one call
// to the next: the global belongs to the instance.
func TestCounterPersists(t *testing.T) {
	out, _ := meter(t, loopModule(), 7)
	h := newHost(t, false)
	m := h.instantiate(t, out)
	total := 0
	for _, k := range []int{3, 3, 3, 5, 1, 20} {
		h.call(t, m, "run", uint64(k))
		total += k
		if got, want := h.polls.Load(), int64(total/7); got != want {
			t.Fatalf("after %d iterations: %d polls, want %d", total, got, want)
		}
	}
}

// TestPlainLoopModule checks that the uninstrumented test module does not
// poll, so that the poll counts above come from the instrumentation.
func TestPlainLoopModule(t *testing.T) {
	h := newHost(t, false)
	m := h.instantiate(t, loopModule())
	h.call(t, m, "run", 1000)
	if n := h.polls.Load(); n != 0 {
		t.Fatalf("%d polls", n)
	}
}

// TestNestedLoops checks that both loops of a nest count: the outer header
// runs n times and the inner one n*m times.
func TestNestedLoops(t *testing.T) {
	// run(n, m) -> total: locals i(2) j(3) total(4).
	code := cat(
		loop(tEmpty),
		i32Const(0), localSet(3),
		loop(tEmpty),
		localGet(4), i32Const(1), i32Add, localSet(4),
		localGet(3), i32Const(1), i32Add, localTee(3), localGet(1), i32LtU, brIf(0),
		end,
		localGet(2), i32Const(1), i32Add, localTee(2), localGet(0), i32LtU, brIf(0),
		end,
		localGet(4),
	)
	wasm := mod(
		sec(1, vecOf(fn(nil, bs(tI32)), fn(bs(tI32, tI32), bs(tI32)))),
		sec(2, vecOf(importFunc("ptcx", "poll", 0))),
		sec(3, vecOf(uleb(1))),
		sec(7, vecOf(export("run", 0, 1))),
		sec(10, vecOf(body([][2]uint32{{3, tI32}}, code))),
	)
	for _, interval := range []uint32{1, 3, 10, 1000} {
		out, st := meter(t, wasm, interval)
		if st.loops != 2 {
			t.Fatalf("%d loops instrumented, want 2", st.loops)
		}
		h := newHost(t, false)
		m := h.instantiate(t, out)
		const n, mm = 13, 17
		if got := h.call(t, m, "run", n, mm)[0]; got != n*mm {
			t.Fatalf("run returned %d", got)
		}
		if got, want := h.polls.Load(), int64((n+n*mm)/interval); got != want {
			t.Errorf("interval %d: %d polls, want %d", interval, got, want)
		}
	}
}

// TestMultiValueLoop checks loops whose block type is a type index with
// parameters and results, and a value type: the check leaves the operand
// stack alone, so the module still validates and computes the same.
func TestMultiValueLoop(t *testing.T) {
	// fib(n) -> i32, n >= 1: (a, b) = (0, 1); loop (i32 i32) -> (i32 i32)
	// n times: (a, b) = (b, a+b). Locals: a(1) b(2).
	fib := cat(
		i32Const(0), i32Const(1),
		loop(0x02), // type 2: [i32 i32] -> [i32 i32]
		localSet(2), localSet(1),
		localGet(2),
		localGet(1), localGet(2), i32Add,
		localGet(0), i32Const(1), i32Sub, localTee(0),
		brIf(0),
		end,
		drop,
	)
	// sum(n) -> i32: a loop of result type i32 (one-byte block type)
	// adding n, n-1, ... 1 into local 1 and leaving it on the stack.
	sum := cat(
		loop(tI32),
		localGet(1), localGet(0), i32Add, localSet(1),
		localGet(1),
		localGet(0), i32Const(1), i32Sub, localTee(0),
		brIf(0),
		end,
	)
	wasm := mod(
		sec(1, vecOf(fn(nil, bs(tI32)), fn(bs(tI32), bs(tI32)), fn(bs(tI32, tI32), bs(tI32, tI32)))),
		sec(2, vecOf(importFunc("ptcx", "poll", 0))),
		sec(3, vecOf(uleb(1), uleb(1))),
		sec(7, vecOf(export("fib", 0, 1), export("sum", 0, 2))),
		sec(10, vecOf(
			body([][2]uint32{{2, tI32}}, fib),
			body([][2]uint32{{1, tI32}}, sum),
		)),
	)
	out, st := meter(t, wasm, 4)
	if st.loops != 2 {
		t.Fatalf("%d loops", st.loops)
	}
	h := newHost(t, false)
	plain := h.instantiate(t, wasm)
	metered := h.instantiate(t, out)
	for _, n := range []uint64{1, 2, 10, 30} {
		for _, f := range []string{"fib", "sum"} {
			want := h.call(t, plain, f, n)[0]
			if got := h.call(t, metered, f, n)[0]; got != want {
				t.Fatalf("%s(%d) = %d, want %d", f, n, got, want)
			}
		}
	}
	if got, want := h.polls.Load(), int64(2*(1+2+10+30)/4); got != want {
		t.Fatalf("%d polls, want %d", got, want)
	}
}

// envGlobals is a module exporting two immutable i32 globals, g = 7 and
// h = 8, to be imported as env.g and env.h.
func envGlobals() []byte {
	return mod(
		sec(6, vecOf(cat(bs(tI32, 0), i32Const(7), end), cat(bs(tI32, 0), i32Const(8), end))),
		sec(7, vecOf(export("g", 3, 0), export("h", 3, 1))),
	)
}

// TestImportedGlobals checks that the counter's index counts imported
// globals: a module importing two immutable globals and defining a mutable
// one must get global 3. Index 1 would be an immutable import (the module
// would not validate), index 2 the module's own global (its value would
// change).
func TestImportedGlobals(t *testing.T) {
	wasm := mod(
		sec(1, vecOf(fn(nil, bs(tI32)), fn(bs(tI32), bs(tI32)))),
		sec(2, vecOf(
			importGlobal("env", "g", tI32, false),
			importFunc("ptcx", "poll", 0),
			importGlobal("env", "h", tI32, false),
		)),
		sec(3, vecOf(uleb(1))),
		sec(6, vecOf(cat(bs(tI32, 1), i32Const(42), end))),
		sec(7, vecOf(export("run", 0, 1), export("mine", 3, 2))),
		sec(10, vecOf(body([][2]uint32{{1, tI32}},
			countLoop(1, 0),
			localGet(1), globalGet(0), i32Add, globalGet(1), i32Add, globalGet(2), i32Add))),
	)
	out, st := meter(t, wasm, 3)
	if st.global != 3 {
		t.Fatalf("counter is global %d, want 3", st.global)
	}
	h := newHost(t, false)
	if _, err := h.r.InstantiateWithConfig(h.ctx, envGlobals(), wazero.NewModuleConfig().WithName("env")); err != nil {
		t.Fatal(err)
	}
	m := h.instantiate(t, out)
	if got := h.call(t, m, "run", 10)[0]; got != 10+7+8+42 {
		t.Fatalf("run returned %d", got)
	}
	if got := h.polls.Load(); got != 3 {
		t.Fatalf("%d polls, want 3", got)
	}
	if v := m.ExportedGlobal("mine").Get(); v != 42 {
		t.Fatalf("the module's own global became %d", v)
	}
}

// TestExistingGlobals checks a module with a global section of its own and
// no imported globals: the counter comes after its globals, which keep their
// values.
func TestExistingGlobals(t *testing.T) {
	wasm := mod(
		sec(1, vecOf(fn(nil, bs(tI32)), fn(bs(tI32), bs(tI32)))),
		sec(2, vecOf(importFunc("ptcx", "poll", 0))),
		sec(3, vecOf(uleb(1))),
		sec(6, vecOf(cat(bs(tI32, 1), i32Const(-5), end), cat(bs(tI64, 0), bs(0x42), sleb(1<<40), end))),
		sec(7, vecOf(export("run", 0, 1), export("a", 3, 0), export("b", 3, 1))),
		sec(10, vecOf(body([][2]uint32{{1, tI32}}, countLoop(1, 0), localGet(1)))),
	)
	out, st := meter(t, wasm, 2)
	if st.global != 2 {
		t.Fatalf("counter is global %d, want 2", st.global)
	}
	h := newHost(t, false)
	m := h.instantiate(t, out)
	h.call(t, m, "run", 9)
	if got := h.polls.Load(); got != 4 {
		t.Fatalf("%d polls, want 4", got)
	}
	if a, b := int32(m.ExportedGlobal("a").Get()), m.ExportedGlobal("b").Get(); a != -5 || b != 1<<40 {
		t.Fatalf("globals became %d, %d", a, b)
	}
}

// TestPollNotFirstImport checks the function index of an import that comes
// after other function imports (and a global import, which does not count).
func TestPollNotFirstImport(t *testing.T) {
	wasm := mod(
		sec(1, vecOf(fn(nil, bs(tI32)), fn(bs(tI32), bs(tI32)))),
		sec(2, vecOf(
			importFunc("other", "first", 0),
			importGlobal("env", "g", tI32, false),
			importFunc("other", "second", 0),
			importFunc("ptcx", "poll", 0),
			importFunc("other", "after", 0),
		)),
		sec(3, vecOf(uleb(1))),
		sec(7, vecOf(export("run", 0, 4))),
		sec(10, vecOf(body([][2]uint32{{1, tI32}}, countLoop(1, 0), localGet(1)))),
	)
	out, st := meter(t, wasm, 5)
	if st.poll != 2 || st.global != 1 {
		t.Fatalf("poll is function %d, counter global %d; want 2 and 1", st.poll, st.global)
	}
	h := newHost(t, false)
	var others atomic32
	b := h.r.NewHostModuleBuilder("other")
	for _, name := range []string{"first", "second", "after"} {
		b.NewFunctionBuilder().WithFunc(func() int32 { others.add(); return 0 }).Export(name)
	}
	if _, err := b.Instantiate(h.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.r.InstantiateWithConfig(h.ctx, envGlobals(), wazero.NewModuleConfig().WithName("env")); err != nil {
		t.Fatal(err)
	}
	m := h.instantiate(t, out)
	h.call(t, m, "run", 23)
	if got := h.polls.Load(); got != 4 {
		t.Fatalf("%d polls, want 4", got)
	}
	if n := others.load(); n != 0 {
		t.Fatalf("other imports called %d times", n)
	}
}

// TestSectionPlacement checks where the global section goes when the module
// has none: after memory (and tag), before export, start, element, data
// count, code and data, with custom sections anywhere kept as they are.
func TestSectionPlacement(t *testing.T) {
	types := sec(1, vecOf(fn(nil, bs(tI32)), fn(bs(tI32), bs(tI32)), fn(nil, nil)))
	imports := sec(2, vecOf(importFunc("ptcx", "poll", 0)))
	funcs := sec(3, vecOf(uleb(1), uleb(2)))
	table := sec(4, vecOf(bs(0x70, 0x00, 0x02)))
	memory := sec(5, vecOf(bs(0x01, 0x01, 0x02)))
	exports := sec(7, vecOf(export("run", 0, 1)))
	start := sec(8, uleb(2))
	elems := sec(9, vecOf(cat(bs(0x00), i32Const(0), end, vecOf(uleb(1), uleb(2)))))
	dataCount := sec(12, uleb(1))
	run := body([][2]uint32{{1, tI32}}, countLoop(1, 0), localGet(1))
	code := sec(10, vecOf(run, body(nil, bs(0x01)))) // nop
	codeMem := sec(10, vecOf(run,
		body(nil, i32Const(0), i32Const(0), i32Const(2), bs(0xfc, 0x08, 0x00, 0x00)), // memory.init 0 0
	))
	data := sec(11, vecOf(cat(bs(0x01), str("hi"))))
	c := func(n string) []byte { return customSec(n, []byte{0x03, 0x03, 0xfd}) }
	for name, wasm := range map[string][]byte{
		"all":            mod(c("a"), types, c("b"), imports, funcs, table, memory, c("c"), exports, start, elems, dataCount, codeMem, data, c("z")),
		"no-memory":      mod(types, imports, funcs, table, c("x"), exports, code),
		"before-start":   mod(types, imports, funcs, memory, start, dataCount, code, data),
		"before-elem":    mod(types, imports, funcs, table, elems, c("x"), code),
		"before-code":    mod(types, imports, funcs, c("x"), code, c("y")),
		"before-datacnt": mod(types, imports, funcs, memory, dataCount, codeMem, data),
		"no-code":        mod(types, imports, c("x")),
	} {
		t.Run(name, func(t *testing.T) {
			out, _ := meter(t, wasm, 3)
			h := newHost(t, false)
			if _, err := h.r.CompileModule(h.ctx, out); err != nil {
				t.Fatalf("compile: %v", err)
			}
		})
	}
}

// atomic32 counts calls from host functions.
type atomic32 struct{ n int64 }

func (a *atomic32) add()        { a.n++ }
func (a *atomic32) load() int64 { return a.n }

// TestImmediatesAreNotLoops checks that only the real loop of a body full of
// 0x03 immediates is instrumented and that the result validates and runs
// as before.
func TestImmediatesAreNotLoops(t *testing.T) {
	code := cat(
		i32Const(3), localSet(3),
		bs(0x42, 0x03), bs(0x21, 0x05), // i64.const 3
		bs(0x43, 0x03, 0x03, 0x0b, 0x00), bs(0x21, 0x06), // f32.const with 0x03 and 0x0b bytes
		bs(0x44, 0x03, 0x0b, 0x02, 0x04, 0x03, 0x03, 0x03, 0x00), bs(0x21, 0x07),
		i32Const(0), bs(0x28, 0x02, 0x03), localSet(4), // i32.load align=2 offset=3
		i32Const(0), bs(0x28, 0x82, 0x00, 0x03), localSet(4), // non-minimal alignment LEB
		bs(0x02, 0x40),                                      // block
		localGet(0), bs(0x0e, 0x03, 0x00, 0x00, 0x00, 0x00), // br_table 0 0 0 0
		end,
		bs(0x3f, 0x00), drop, // memory.size 0
		localGet(7), bs(0xfc, 0x03), drop, // i32.trunc_sat_f64_u
		i32Const(3), bs(0xc0), drop, // i32.extend8_s
		localGet(1), localGet(2), i32Const(3), bs(0x1c, 0x01, tI32), drop, // select (result i32)
		bs(0xd0, 0x70), bs(0xd1), drop, // ref.null func; ref.is_null
		i32Const(0), i32Const(3), i32Const(0), bs(0xfc, 0x0b, 0x00), // memory.fill
		i32Const(0), i32Const(3), i32Const(0), bs(0xfc, 0x0a, 0x00, 0x00), // memory.copy
		bs(0xd2, 0x03), drop, // ref.func 3
		i32Const(0), bs(0x11, 0x02, 0x00), drop, // call_indirect type 2 table 0
		countLoop(3, 0),
		localGet(3),
	)
	wasm := mod(
		sec(1, vecOf(fn(nil, bs(tI32)), fn(bs(tI32), bs(tI32)), fn(nil, bs(tI32)))),
		sec(2, vecOf(importFunc("ptcx", "poll", 0))),
		sec(3, vecOf(uleb(1), uleb(2), uleb(2), uleb(2))),
		sec(4, vecOf(bs(0x70, 0x00, 0x01))),
		sec(5, vecOf(bs(0x00, 0x01))),
		sec(7, vecOf(export("run", 0, 1))),
		sec(9, vecOf(
			cat(bs(0x00), i32Const(0), end, vecOf(uleb(2))),
			cat(bs(0x03, 0x00), vecOf(uleb(3))), // declarative, for ref.func 3
		)),
		sec(10, vecOf(
			body([][2]uint32{{4, tI32}, {1, tI64}, {1, 0x7d}, {1, 0x7c}}, code),
			body(nil, i32Const(3)),
			body(nil, i32Const(3)),
			body(nil, i32Const(3)),
		)),
	)
	out, st := meter(t, wasm, 2)
	if st.loops != 1 {
		t.Fatalf("%d loops instrumented, want 1", st.loops)
	}
	h := newHost(t, false)
	plain := h.instantiate(t, wasm)
	metered := h.instantiate(t, out)
	if got, want := h.call(t, metered, "run", 10)[0], h.call(t, plain, "run", 10)[0]; got != want {
		t.Fatalf("run returned %d, want %d", got, want)
	}
	// The loop counts local 3 from 3 to 10: its header runs 7 times.
	if got := h.polls.Load(); got != 7/2 {
		t.Fatalf("%d polls, want 3", got)
	}
}

// TestDeterministic checks that the same input gives the same bytes.
func TestDeterministic(t *testing.T) {
	a, err := Instrument(loopModule(), Options{Module: "ptcx", Name: "poll", Interval: 100})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Instrument(loopModule(), Options{Module: "ptcx", Name: "poll", Interval: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("two runs differ")
	}
}

// TestPollStops checks that a poll that fails the call stops a loop that
// would otherwise never end, and that the instance reports it as the
// export's error.
func TestPollStops(t *testing.T) {
	out, _ := meter(t, loopModule(), 1000)
	h := newHost(t, false)
	h.onPoll = func(ctx context.Context) {
		if h.polls.Load() == 50 {
			panic(errStopped)
		}
	}
	m := h.instantiate(t, out)
	_, err := m.ExportedFunction("run").Call(h.ctx, api.EncodeI32(-1)) // 2^32-1 iterations
	if err == nil || !errors.Is(err, errStopped) {
		t.Fatalf("run returned %v, want the poll's error", err)
	}
	if got := h.polls.Load(); got != 50 {
		t.Fatalf("%d polls", got)
	}
	// The counter was reset before the failed call: the instance goes on
	// polling every 1000 iterations.
	h.call(t, m, "run", 5500)
	if got := h.polls.Load(); got != 55 {
		t.Fatalf("%d polls after a failed poll and 5500 more iterations, want 55", got)
	}
}

// errStopped is what the tests' poll panics with to stop the guest.
var errStopped = errors.New("stopped by poll")
