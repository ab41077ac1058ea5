package wasmhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"

	"github.com/ptcx/ptcx/wasmhost"
)

// spin is a program that computes for about n loop iterations, polling as
// any loop does.
func spin(n int) string {
	return `let x = 0; for (let i = 0; i < ` + strconv.Itoa(n) + `; i++) x = (x + i * 7) % 1000003; return x`
}

// calibrate returns a loop count that computes for about want, and the
// compute time it took alone.
func calibrate(t *testing.T, rt *wasmhost.Runtime, want time.Duration) (int, time.Duration) {
	t.Helper()
	n := 1_000_000
	for {
		out, re, _ := runJS(t, rt, spin(n), api.Limits{})
		require.Nil(t, re)
		if c := out.Stats.Compute; c >= want/2 {
			n = int(float64(n) * float64(want) / float64(c))
			out, re, _ = runJS(t, rt, spin(n), api.Limits{})
			require.Nil(t, re)
			return n, out.Stats.Compute
		}
		n *= 4
	}
}

// The case, scaled down: programs that each need ~0.2 s of CPU,
// with a compute limit 2.5 times what one takes alone, run 8 at a time on
// 2 Ps. Charged wall time, each would be charged about 4 times its CPU time
// and fail; charged CPU time, all succeed. With the default slots (one per
// P) the guests take turns instead; they succeed too. A program that
// really needs more than its limit still fails with the compute timeout.
func TestRuntime_Run_computeIsCPUTime(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	calib := newRuntime(t, testConfig())
	n, alone := calibrate(t, calib, 200*time.Millisecond)
	limit := max(alone*5/2, 300*time.Millisecond)
	t.Logf("%d iterations: %v alone; limit %v", n, alone, limit)

	for _, slots := range []int{0, 8} {
		t.Run("slots "+strconv.Itoa(slots), func(t *testing.T) {
			rt := newRuntime(t, testConfig().WithGuestSlots(slots))
			const runs = 8
			outs := make([]wasmhost.Outcome, runs)
			errs := make([]error, runs)
			var wg sync.WaitGroup
			for i := range runs {
				wg.Go(func() {
					outs[i], errs[i] = rt.Run(context.Background(), wasmhost.Program{JS: spin(n), Limits: api.Limits{ComputeTime: limit}}, &tools{})
				})
			}
			wg.Wait()
			var slowest time.Duration
			for i := range runs {
				require.NoError(t, errs[i], "run %d", i)
				require.Less(t, outs[i].Stats.Compute, limit)
				slowest = max(slowest, outs[i].Stats.Wall)
			}
			require.Greater(t, slowest, limit, "the runs did not contend: the test shows nothing")
		})
	}

	// Ten times the calibrated work: far past the limit even when the
	// calibration ran on a loaded machine and overstated the time alone.
	out, re, _ := runJS(t, calib, spin(n*10), api.Limits{ComputeTime: limit})
	require.NotNil(t, re, "%v of compute", out.Stats.Compute)
	require.Equal(t, api.KindTimeout, re.Kind)
	require.Contains(t, re.Message, "compute time limit of "+limit.String())
	require.NotErrorIs(t, re, wasmhost.ErrAbandoned)
	require.GreaterOrEqual(t, out.Stats.Compute, limit)
	require.Less(t, out.Stats.Compute, limit+300*time.Millisecond)
}

// blocking is a Dispatcher whose "block" tool holds the guest's thread
// inside the export for a while before it answers: sleeping (the guest is
// descheduled, as on a loaded machine) or spinning (a native stall that
// does not poll). It breaks Dispatch's contract on purpose.
type blocking struct {
	spin bool
	d    time.Duration // of sleep, or of CPU time spun (wall time where threads have no clock)
}

func (b blocking) Dispatch(_ string, _ json.RawMessage, done func(wasmhost.CallResult)) {
	if b.spin {
		// CPU time, not wall time: on a loaded machine the spinning
		// thread gets a fraction of a core.
		if wasmhost.ThreadClocks {
			for start := wasmhost.ThreadCPU(); wasmhost.ThreadCPU()-start < int64(b.d); {
			}
		} else {
			for end := time.Now().Add(b.d); time.Now().Before(end); {
			}
		}
	} else {
		time.Sleep(b.d)
	}
	done(wasmhost.CallResult{OK: true, Value: json.RawMessage(`1`)})
}

// The watchdog judges a long export that stopped polling in CPU time: a
// guest kept off the CPU for four times its compute limit is not killed,
// one that burns it in native code is abandoned. (Run returns only once the
// import is back, since imports hold the run's lock: that is why a
// Dispatcher must not block. A stall in the guest's own code holds none.)
// The stall is in the program's second export, on a runner: the first,
// on Run's caller's goroutine, is never abandoned (below).
func TestRuntime_Run_watchdogJudgesCPUTime(t *testing.T) {
	rt := sharedRuntime(t)
	const limit = 300 * time.Millisecond
	// The loop before the call makes the export long enough to be charged
	// CPU time.
	const later = `await new Promise((r) => setTimeout(r, 0)); `
	js := later + `const a = (() => {` + spin(200_000) + `})(); tools.block(); return a`

	out, err := rt.Run(context.Background(), wasmhost.Program{JS: js, Tools: []string{"block"}, Limits: api.Limits{ComputeTime: limit}},
		blocking{d: 4 * limit})
	require.NoError(t, err)
	require.Less(t, out.Stats.Compute, limit)
	require.Greater(t, out.Stats.Wall, 4*limit)

	_, err = rt.Run(context.Background(), wasmhost.Program{JS: js, Tools: []string{"block"}, Limits: api.Limits{ComputeTime: limit}},
		blocking{spin: true, d: 6 * limit})
	var re *wasmhost.RunError
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, api.KindTimeout, re.Kind)
	require.Contains(t, re.Message, "compute time limit")
	require.ErrorIs(t, err, wasmhost.ErrAbandoned)
	requireHealthy(t, rt)

	// In the first export, Run waits for the import as it would for the
	// run's lock, and the guest stops at its next poll, charged the CPU
	// the import burnt on its thread: not abandoned.
	_, err = rt.Run(context.Background(), wasmhost.Program{JS: strings.TrimPrefix(js, later), Tools: []string{"block"}, Limits: api.Limits{ComputeTime: limit}},
		blocking{spin: true, d: 6 * limit})
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, api.KindTimeout, re.Kind)
	require.Contains(t, re.Message, "compute time limit")
	require.NotErrorIs(t, err, wasmhost.ErrAbandoned)
	requireHealthy(t, rt)
}

// Wall time stays wall time: a guest that waits is charged no compute time
// but still ends at its wall limit.
func TestRuntime_Run_wallLimitIsWallTime(t *testing.T) {
	rt := sharedRuntime(t)
	out, re, _ := runJS(t, rt, `await tools.hang()`, api.Limits{WallTime: 200 * time.Millisecond})
	require.NotNil(t, re)
	require.Equal(t, api.KindTimeout, re.Kind)
	require.Contains(t, re.Message, "wall time limit of 200ms")
	require.Less(t, out.Stats.Compute, 100*time.Millisecond)
}

// hugeLoopBody is a program of at most n bytes that is a loop whose body
// is straight-line code: one backward jump per n bytes of source.
func hugeLoopBody(n int) string {
	const head, tail = `let x = 0; for (;;) {`, `}`
	return head + strings.Repeat(`x++;`, (n-len(head)-len(tail))/4) + tail
}

// Every way a program can compute without end, each stopped at its
// compute deadline by a poll (not abandoned by the watchdog), with the
// timeout kind, on whichever engine the tests run on (PTCX_ENGINE): the
// loops JavaScript has, the control flow that jumps without a loop
// (exceptions, finally, labels, generators, await, recursion, with, eval), a
// loop body as large as a program may be, and native built-ins that loop
// in C.
func TestRuntime_Run_hostileComputeStopsAtItsLimit(t *testing.T) {
	rt := sharedRuntime(t)
	const limit = 300 * time.Millisecond
	for _, tc := range []struct{ name, js string }{
		{"for(;;)", `for (;;) {}`},
		{"while(true)", `while (true) {}`},
		{"do while", `do {} while (1)`},
		{"throw and catch in a loop", `for (;;) { try { throw 0 } catch {} }`},
		{"finally in a loop", `let n = 0; for (;;) { try { n++ } finally { n-- } }`},
		{"continue through finally", `for (;;) { try { continue } finally {} }`},
		{"labelled continue", `outer: for (;;) { for (;;) { continue outer } }`},
		{"labelled break of a block", `for (;;) { a: { break a } }`},
		{"for of a huge iterator", `const it = { [Symbol.iterator]() { return { next() { return { value: 1, done: false } } } } }; for (const x of it) {}`},
		{"for in, again and again", `const o = { a: 1, b: 2, c: 3 }; for (;;) { for (const k in o) {} }`},
		{"a generator's loop", `function* g() { for (;;) yield 1 } for (const x of g()) {}`},
		{"an async function's loop", `async function f() { for (;;) await 0 } await f()`},
		{"await in an infinite loop", `for (;;) await null`},
		{"recursion without loops", `function f(n) { return n <= 0 ? 0 : f(n - 1) + f(n - 1) } return f(60)`},
		{"recursion that catches its stack overflow", `function f() { try { f() } catch { f() } } f()`},
		{"with in a loop", `const o = { a: 1 }; let s = 0; for (;;) { with (o) { s += a } }`},
		{"eval in a loop", `for (;;) eval("1 + 1")`},
		{"new Function in a loop", `for (;;) new Function("return 1")()`},
		{"sort calling back", `const a = Array.from({ length: 1e5 }, (_, i) => i); for (;;) a.sort((x, y) => y - x)`},
		{"a loop body as large as a program", hugeLoopBody(512 << 10)},
		{"a huge BigInt", `return String(7n ** 300000n).length`},
		{"a regexp blow-up", `return /(a+)+$/.test("a".repeat(40) + "b")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, re, _ := runJS(t, rt, tc.js, api.Limits{ComputeTime: limit, WallTime: 60 * time.Second})
			took := time.Since(start)
			require.NotNil(t, re, "the program ended by itself")
			require.Equal(t, api.KindTimeout, re.Kind, re.Message)
			require.Contains(t, re.Message, "compute time limit")
			require.NotErrorIs(t, re, wasmhost.ErrAbandoned, "the guest was stopped at a poll, not abandoned")
			require.Less(t, took, 20*time.Second, "far past the compute deadline")
			t.Logf("stopped after %v", took)
		})
	}
	requireHealthy(t, rt)
}
