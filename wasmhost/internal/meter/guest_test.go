package meter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/ptcx/ptcx/guest"
)

// guestHost runs the real guest through a minimal driver of its ABI
// (docs/abi.md): no tools, no timers. Its poll import counts calls and stops
// the guest, by panicking, once the deadline passed.
type guestHost struct {
	ctx       context.Context
	r         wazero.Runtime
	compiled  wazero.CompiledModule
	polls     atomic.Int64
	deadline  atomic.Int64 // unix nanoseconds; 0 for none
	result    string
	errJSON   string
	startTime time.Duration // how long the last ptcx_start ran
	// onLog, when set, is called with every console line.
	onLog func(line string)
}

// errDeadline is what the guest host's poll panics with.
var errDeadline = errors.New("deadline passed")

func newGuestHost(t testing.TB, wasm []byte, closeOnContextDone bool) *guestHost {
	t.Helper()
	g := &guestHost{ctx: context.Background()}
	g.r = wazero.NewRuntimeWithConfig(g.ctx, wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(closeOnContextDone).WithCompilationCache(compiled))
	t.Cleanup(func() { _ = g.r.Close(g.ctx) })
	wasi_snapshot_preview1.MustInstantiate(g.ctx, g.r)
	i32 := api.ValueTypeI32
	b := g.r.NewHostModuleBuilder("ptcx")
	def := func(name string, params, results []api.ValueType, f func(mod api.Module, stack []uint64)) {
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, mod api.Module, stack []uint64) {
			f(mod, stack)
		}), params, results).Export(name)
	}
	read := func(mod api.Module, ptr, n uint64) string {
		s, ok := mod.Memory().Read(uint32(ptr), uint32(n))
		if !ok {
			panic("bad range")
		}
		return string(s)
	}
	def("call", []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}, func(_ api.Module, s []uint64) { s[0] = api.EncodeI32(-2) })
	def("log", []api.ValueType{i32, i32, i32}, nil, func(m api.Module, s []uint64) {
		if g.onLog != nil {
			g.onLog(read(m, s[1], s[2]))
		}
	})
	def("timer_set", []api.ValueType{i32}, []api.ValueType{i32}, func(_ api.Module, s []uint64) { s[0] = api.EncodeI32(-3) })
	def("timer_clear", []api.ValueType{i32}, nil, func(api.Module, []uint64) {})
	def("result", []api.ValueType{i32, i32}, nil, func(m api.Module, s []uint64) { g.result = read(m, s[0], s[1]) })
	def("error", []api.ValueType{i32, i32}, nil, func(m api.Module, s []uint64) { g.errJSON = read(m, s[0], s[1]) })
	def("poll", nil, []api.ValueType{i32}, func(_ api.Module, s []uint64) {
		g.polls.Add(1)
		if d := g.deadline.Load(); d != 0 && time.Now().UnixNano() > d {
			panic(errDeadline)
		}
		s[0] = 0
	})
	if _, err := b.Instantiate(g.ctx); err != nil {
		t.Fatal(err)
	}
	var err error
	if g.compiled, err = g.r.CompileModule(g.ctx, wasm); err != nil {
		t.Fatal(err)
	}
	return g
}

// start instantiates the guest, initialises it and starts code, with the
// poll deadline timeout after the start (none if 0). It returns the status
// of ptcx_start and its error.
func (g *guestHost) start(t testing.TB, code string, timeout time.Duration) (uint64, error) {
	t.Helper()
	g.result, g.errJSON = "", ""
	g.deadline.Store(0)
	m, err := g.r.InstantiateModule(g.ctx, g.compiled, wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(g.ctx)
	call := func(name string, args ...uint64) (uint64, error) {
		res, err := m.ExportedFunction(name).Call(g.ctx, args...)
		if err != nil {
			return 0, err
		}
		return res[0], nil
	}
	if st, err := call("ptcx_init", 0, 0); err != nil || st != 0 {
		t.Fatalf("ptcx_init: %d, %v", st, err)
	}
	cfg, _ := json.Marshal(map[string]any{
		"code": code, "tools": []string{}, "memoryLimit": 200 << 20, "memoryBytes": 256 << 20,
		"maxPendingCalls": 128, "maxCalls": 10000, "maxTimers": 10000,
	})
	ptr, err := call("ptcx_buffer", uint64(len(cfg)+1))
	if err != nil || ptr == 0 {
		t.Fatalf("ptcx_buffer: %d, %v", ptr, err)
	}
	m.Memory().Write(uint32(ptr), append(cfg, 0))
	if timeout > 0 {
		g.deadline.Store(time.Now().Add(timeout).UnixNano())
	}
	t0 := time.Now()
	defer func() { g.startTime = time.Since(t0) }()
	return call("ptcx_start", ptr, uint64(len(cfg)))
}

// TestGuest instruments the real guest: it succeeds, the output differs
// from the input only by the checks, the counter global and the ptcx.metered
// section, wazero compiles it, and every loop of the output is followed by
// the check.
func TestGuest(t *testing.T) {
	in := guest.Wasm()
	out, st := meter(t, in, 10000)
	t.Logf("%d bytes -> %d bytes, %d loops in %d bodies, counter global %d, poll function %d",
		len(in), len(out), st.loops, st.bodies, st.global, st.poll)
	if st.loops < 100 || st.bodies < 100 {
		t.Fatalf("stats %+v: too few loops or bodies for QuickJS", st)
	}
	// Every loop the output holds is followed by a check; the checks hold
	// no loop.
	m, err := decodeModule(out, "ptcx", "poll")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.loops) != st.loops {
		t.Fatalf("the output has %d loops, the input %d", len(m.loops), st.loops)
	}
	check := expectedCheck(st.global, st.poll, 10000, false)
	for _, at := range m.loops {
		if !bytes.HasPrefix(out[at:], check) {
			t.Fatalf("the loop ending at %d is not followed by the check", at)
		}
	}
	// The growth is the checks, one global of 6 bytes, the 19-byte custom
	// section and longer size fields.
	growth := len(out) - len(in) - st.loops*len(check) - 6 - 19
	if growth < 0 || growth > st.bodies+8 {
		t.Fatalf("unexplained growth of %d bytes", growth)
	}
	r := wazero.NewRuntimeWithConfig(context.Background(), wazero.NewRuntimeConfigCompiler().WithCompilationCache(compiled))
	defer r.Close(context.Background())
	if _, err := r.CompileModule(context.Background(), out); err != nil {
		t.Fatalf("wazero does not compile the output: %v", err)
	}
}

// TestGuestBulk instruments the real guest with bulk-memory charges: the
// output differs from the input only by the checks, the charges and their
// locals, the counter global and the ptcx.metered section (checkGrowth),
// every memory.copy and memory.fill is charged, and wazero compiles it.
func TestGuestBulk(t *testing.T) {
	in := guest.Wasm()
	out, st := meterOpt(t, in, Options{Module: "ptcx", Name: "poll", Interval: 10000, BulkBytes: 4096})
	t.Logf("%d bytes -> %d bytes, %d loops, %d memory.copy, %d memory.fill, %d memory.init in %d of %d bodies",
		len(in), len(out), st.loops, st.copies, st.fills, st.inits, st.localBodies, st.bodies)
	// The guest as built (QuickJS and wasi-libc with bulk memory) has over
	// a hundred of each kind of bulk copy (113 and 40 when this was
	// written; the glue adds a few as it grows) and no memory.init.
	if st.copies < 100 || st.fills < 30 || st.inits != 0 {
		t.Fatalf("stats %+v, want at least 100 memory.copy, 30 memory.fill and no memory.init", st)
	}
	if st.localBodies < 50 || st.localBodies > st.bulk() {
		t.Fatalf("%d bodies given a local for %d instructions", st.localBodies, st.bulk())
	}
	m, err := decodeModule(out, "ptcx", "poll")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.loops) != st.loops || len(m.bulk) != st.bulk() {
		t.Fatalf("the output has %d loops and %d bulk-memory instructions, the input %d and %d", len(m.loops), len(m.bulk), st.loops, st.bulk())
	}
	r := wazero.NewRuntimeWithConfig(context.Background(), wazero.NewRuntimeConfigCompiler().WithCompilationCache(compiled))
	defer r.Close(context.Background())
	if _, err := r.CompileModule(context.Background(), out); err != nil {
		t.Fatalf("wazero does not compile the output: %v", err)
	}
}

// guestOpt is how the guest tests meter the guest, with or without
// bulk-memory charges.
func guestOpt(bulkBytes uint32) Options {
	return Options{Module: "ptcx", Name: "poll", Interval: 10000, BulkBytes: bulkBytes}
}

// TestGuestRuns runs JavaScript programs in the plain and the metered guest
// with a generous deadline: results are the same, and only the metered
// guest polls inside loops.
func TestGuestRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	metered, _ := meterOpt(t, guest.Wasm(), guestOpt(0))
	bulk, _ := meterOpt(t, guest.Wasm(), guestOpt(4096))
	plain := newGuestHost(t, guest.Wasm(), false)
	insts := []*guestHost{newGuestHost(t, metered, false), newGuestHost(t, bulk, false)}
	for _, code := range []string{
		"return 6*7",
		"let s = 0; for (let i = 0; i < 1e6; i++) s += i % 7; return s",
		"return JSON.parse(JSON.stringify({a: [1, 'two', {b: null}], c: 1.5}))",
		"return 'hello world '.repeat(1000).split(' ').map(w => w.toUpperCase()).join('-').length",
		"return /(a+)+b/.test('a'.repeat(20) + 'b')",
		"const a = []; for (let i = 0; i < 1e5; i++) a.push((i * 7919) % 100003); a.sort((x, y) => x - y); return a.slice(0, 5)",
		"return String(3n ** 2000n).slice(-10)",
		"throw new Error('boom')",
		"return Array.from({length: 100}, (_, i) => i * i).reduce((a, b) => a + b)",
		"const a = new Uint8Array(1 << 20); for (let i = 0; i < a.length; i += 4099) a[i] = i; for (let i = 0; i < 50; i++) a.copyWithin(0, 1); return [a[0], a[4049], a.length]",
		"const s = 'ab'.repeat(1 << 22); return [s.length, s.slice(-3), s.indexOf('ba', 1 << 21)]",
		"const a = new Float64Array(1 << 20).fill(1.5); a.set(a.subarray(0, 1 << 19), 1 << 19); return a.reduce((x, y) => x + y, 0)",
	} {
		want, err := plain.start(t, code, time.Minute)
		if err != nil {
			t.Fatalf("plain %q: %v", code, err)
		}
		wantResult, wantErr := plain.result, plain.errJSON
		var polls []int64
		for i, inst := range insts {
			inst.polls.Store(0)
			got, err := inst.start(t, code, time.Minute)
			if err != nil {
				t.Fatalf("metered (%d) %q: %v", i, code, err)
			}
			if got != want || inst.result != wantResult || inst.errJSON != wantErr {
				t.Fatalf("%q: metered (%d) %d %q %q, plain %d %q %q", code, i, got, inst.result, inst.errJSON, want, wantResult, wantErr)
			}
			polls = append(polls, inst.polls.Load())
		}
		t.Logf("%q: status %d, result %.40q, %d polls (%d with bulk-memory charges)", code, want, wantResult, polls[0], polls[1])
	}
	// 40 copies of 16 MiB, charged 4096 iterations each, are worth 16
	// intervals: with the counter reset at each poll, a poll every 3 copies
	// or so, 13 more polls (72 and 85 as measured).
	code := "const a = new Uint8Array(1 << 24); for (let i = 0; i < 40; i++) a.copyWithin(0, 1); return a.length"
	var polls []int64
	for _, inst := range insts {
		inst.polls.Store(0)
		if st, err := inst.start(t, code, time.Minute); err != nil || st != 0 || inst.result != "16777216" {
			t.Fatalf("%q: status %d, error %v, result %q", code, st, err, inst.result)
		}
		polls = append(polls, inst.polls.Load())
	}
	t.Logf("%q: %d polls, %d with bulk-memory charges", code, polls[0], polls[1])
	if polls[1]-polls[0] < 10 {
		t.Errorf("the charges of 40 copies of 16 MiB added %d polls, want about 13", polls[1]-polls[0])
	}
}

// TestGuestRunaway checks that a deadline stops a runaway guest: a
// JavaScript loop (QuickJS's interrupt handler polls too) and a long native
// loop (converting a huge BigInt to a string), which only the
// instrumentation makes poll: the plain guest polls once during its whole
// run.
func TestGuestRunaway(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	const timeout = 100 * time.Millisecond
	native := "return String(7n ** 300000n).length"
	for _, bulkBytes := range []uint32{0, 4096} {
		metered, _ := meterOpt(t, guest.Wasm(), guestOpt(bulkBytes))
		g := newGuestHost(t, metered, false)
		for _, code := range []string{"while (true) {}", "for (;;) { try { for (;;) {} } catch {} }", native} {
			g.polls.Store(0)
			st, err := g.start(t, code, timeout)
			late := time.Since(time.Unix(0, g.deadline.Load()))
			if !errors.Is(err, errDeadline) {
				t.Fatalf("%q: status %d, error %v; want the deadline", code, st, err)
			}
			if late > 250*time.Millisecond {
				t.Errorf("%q: stopped %v after the deadline", code, late)
			}
			t.Logf("BulkBytes %d, %q: stopped %v after the deadline (%d polls)", bulkBytes, code, late, g.polls.Load())
		}
	}
	// The plain guest does not poll inside the native loop, so nothing
	// stops it before it ends on its own.
	g := newGuestHost(t, guest.Wasm(), false)
	st, err := g.start(t, native, timeout)
	if err != nil || st != 0 {
		t.Fatalf("plain guest: status %d, error %v; want it to run to completion", st, err)
	}
	late := time.Since(time.Unix(0, g.deadline.Load()))
	t.Logf("plain guest: ran to completion %v after the deadline (%d polls)", late, g.polls.Load())
}

// bulkRunaways are JavaScript programs whose runaway loop is bound by
// bulk-memory instructions, each iteration copying or building 64 MiB. The
// first two say "go" on the console once their memory is grown, after a
// first iteration; the others are timed from the start, memory.grow
// included.
var bulkRunaways = []struct {
	code    string
	afterGo bool // the deadline is set when the program says "go"
}{
	{"const a = new Uint8Array(1 << 26); a.copyWithin(0, 1); console.log('go'); for (;;) a.copyWithin(0, 1)", true},
	{"let n = 'ab'.repeat(1 << 25).length; console.log('go'); for (;;) n += 'ab'.repeat(1 << 25).length", true},
	{"const a = new Uint8Array(1 << 26); for (;;) a.copyWithin(0, 1)", false},
	{"return 'ab'.repeat(1 << 26).length", false},
}

// TestGuestBulkRunaway checks that a deadline stops a runaway guest whose
// loop is bound by bulk-memory instructions soon after the deadline when
// they are charged (BulkBytes 4096). For the check, the deadline is set when
// the program says "go", so that it does not fall in wazero's memory.grow,
// which can take a second on a cold machine and which no instrumentation
// can interrupt; programs timed from their start are logged, not checked.
// Without the charges (BulkBytes 0) the same loops poll only every so many
// 64 MiB copies: that is logged too, with wazero's WithCloseOnContextDone
// and a context cut off 10 s after the deadline bounding the wait.
func TestGuestBulkRunaway(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	const timeout = 100 * time.Millisecond
	const giveUp = 10 * time.Second
	for _, bulkBytes := range []uint32{4096, 0} {
		metered, _ := meterOpt(t, guest.Wasm(), guestOpt(bulkBytes))
		g := newGuestHost(t, metered, bulkBytes == 0)
		for _, p := range bulkRunaways {
			g.onLog = func(line string) {
				if line == "go" && p.afterGo {
					g.deadline.Store(time.Now().Add(timeout).UnixNano())
				}
			}
			g.polls.Store(0)
			g.deadline.Store(0)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if bulkBytes == 0 {
				go func() {
					// Cut the run off giveUp after the deadline.
					for g.deadline.Load() == 0 {
						if ctx.Err() != nil {
							return
						}
						time.Sleep(time.Millisecond)
					}
					select {
					case <-time.After(time.Until(time.Unix(0, g.deadline.Load()).Add(giveUp))):
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			g.ctx = ctx
			start := timeout
			if p.afterGo {
				start = 0
			}
			st, err := g.start(t, p.code, start)
			cancel()
			g.ctx = context.Background()
			if g.deadline.Load() == 0 {
				t.Fatalf("%q: status %d, error %v, and no \"go\"", p.code, st, err)
			}
			late := time.Since(time.Unix(0, g.deadline.Load()))
			what := "stopped"
			if !errors.Is(err, errDeadline) {
				what = fmt.Sprintf("status %d, error %v,", st, err)
			}
			t.Logf("BulkBytes %d, %q (deadline after go: %v): %s %v after the deadline (%d polls)",
				bulkBytes, p.code, p.afterGo, what, late, g.polls.Load())
			if bulkBytes == 0 || !p.afterGo {
				continue
			}
			if !errors.Is(err, errDeadline) {
				t.Fatalf("%q: status %d, error %v; want the deadline", p.code, st, err)
			}
			if late > 250*time.Millisecond {
				t.Errorf("%q: stopped %v after the deadline", p.code, late)
			}
		}
	}
}
