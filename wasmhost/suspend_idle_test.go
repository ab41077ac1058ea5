package wasmhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// idleOnly suspends a run at its idle points only.
func idleOnly(q wasmhost.Quiescence) bool { return q.Idle }

// resumeIdle drives a run that idle suspensions end to its end, as a host
// holding them in this process does: each waits for its first answer or
// its timer, then resumes attached, the time waited counting. It returns
// the last outcome and how many times the run was suspended; a suspension
// that is not idle, or that nothing wakes, is an error.
func resumeIdle(rt *wasmhost.Runtime, out wasmhost.Outcome, err error, d wasmhost.Dispatcher, rs wasmhost.Resumption) (wasmhost.Outcome, error, int) {
	n := 0
	for err == nil && out.Suspended != nil {
		s := out.Suspended
		if !s.Idle || n >= 1000 {
			return out, fmt.Errorf("suspension %d: idle %v", n, s.Idle), n
		}
		n++
		wake := time.NewTimer(time.Until(s.WakeAt))
		if s.WakeAt.IsZero() {
			wake.Stop()
		}
		select {
		case <-s.Answered():
		case <-wake.C:
		case <-time.After(20 * time.Second):
			return out, fmt.Errorf("nothing wakes the suspended run: calls %+v, no timer", s.Calls), n
		}
		wake.Stop()
		rs.Attach, rs.Recycle, rs.Waited = s, s, time.Since(s.At)
		out, err = rt.Resume(context.Background(), s.Snapshot, d, rs)
	}
	return out, err, n
}

// gatedTools is a Dispatcher whose "gate" calls answer when the test says
// (answer), with the value it gives; "echo" answers at once. It counts
// the calls it was given, by name.
type gatedTools struct {
	mu      sync.Mutex
	counts  map[string]int
	waiting []func(wasmhost.CallResult)
	arrived chan struct{} // one token per gate call dispatched
}

func newGatedTools() *gatedTools {
	return &gatedTools{counts: map[string]int{}, arrived: make(chan struct{}, 64)}
}

func (g *gatedTools) Dispatch(name string, args json.RawMessage, done func(wasmhost.CallResult)) {
	g.mu.Lock()
	g.counts[name]++
	g.mu.Unlock()
	if name != "gate" {
		done(wasmhost.CallResult{OK: true, Value: args})
		return
	}
	g.mu.Lock()
	g.waiting = append(g.waiting, done)
	g.mu.Unlock()
	g.arrived <- struct{}{}
}

// answer answers the ith gate call (from 0, in dispatch order).
func (g *gatedTools) answer(i int, value string) {
	g.mu.Lock()
	done := g.waiting[i]
	g.mu.Unlock()
	done(wasmhost.CallResult{OK: true, Value: json.RawMessage(value)})
}

func (g *gatedTools) count(name string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.counts[name]
}

func TestRuntime_Run_suspendIdle_timerCountsTheTimeSuspended(t *testing.T) {
	const sleep = 600 * time.Millisecond
	js := fmt.Sprintf(`const t0 = Date.now(); await new Promise(r => setTimeout(r, %d)); return Date.now() - t0;`, sleep.Milliseconds())
	for _, tc := range []struct {
		name   string
		waited bool
	}{{"waited counted", true}, {"waited not counted", false}} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRuntime(t, testConfig().WithPool(0))
			ctx := context.Background()
			start := time.Now()
			out, err := rt.Run(ctx, wasmhost.Program{JS: js, Suspend: idleOnly, SuspendIdle: 20 * time.Millisecond}, &tools{})
			require.NoError(t, err)
			s := out.Suspended
			require.NotNil(t, s, "the run waiting on its timer was suspended")
			require.True(t, s.Idle)
			require.Empty(t, s.Calls)
			require.Nil(t, s.Answered(), "no call in flight: nothing answers")
			require.WithinDuration(t, start.Add(sleep), s.WakeAt, 200*time.Millisecond, "WakeAt is the timer's deadline")
			u := rt.Usage()
			require.Zero(t, u.Runs)
			require.Zero(t, u.CommittedBytes, "the run's memory limit is no longer committed")
			require.Positive(t, u.SuspendedBytes, "the snapshot held here is charged")
			require.Less(t, u.SuspendedBytes, int64(api.DefaultMemoryBytes/4))

			time.Sleep(time.Until(s.WakeAt))
			rs := wasmhost.Resumption{Attach: s, Recycle: s}
			if tc.waited {
				rs.Waited = time.Since(s.At)
			}
			resumed := time.Now()
			out, err = rt.Resume(ctx, s.Snapshot, &tools{}, rs)
			require.NoError(t, err)
			require.Nil(t, out.Suspended, "the resumed run is not asked at idle points without SuspendIdle")
			took := time.Since(resumed)
			if tc.waited {
				require.Less(t, took, sleep/2, "the timer was due when the run resumed")
				require.GreaterOrEqual(t, out.Stats.Wall, sleep, "the wall time counts the time suspended")
			} else {
				require.GreaterOrEqual(t, took, sleep-50*time.Millisecond, "the suspended time counted toward nothing: the timer waited its delay again, less what it had waited live")
			}
			u = rt.Usage()
			require.Zero(t, u.SuspendedBytes)
			require.Zero(t, u.CommittedBytes)
		})
	}
}

func TestRuntime_Run_suspendIdle_callsInFlightAnswerTheResumedRun(t *testing.T) {
	rt := newRuntime(t, testConfig())
	g := newGatedTools()
	prog := wasmhost.Program{JS: `
		const a = tools.gate({n: 1}), b = tools.gate({n: 2});
		const first = await a;
		console.log("first", JSON.stringify(first));
		return [first, await b, await tools.echo({n: 3})];`,
		Tools: []string{"gate", "echo"}, Suspend: idleOnly, SuspendIdle: 10 * time.Millisecond}
	out, err := rt.Run(context.Background(), prog, g)
	require.NoError(t, err)
	s := out.Suspended
	require.NotNil(t, s)
	require.Len(t, s.Calls, 2)
	for _, c := range s.Calls {
		require.Equal(t, wasmhost.CallDispatched, c.State)
	}
	select {
	case <-s.Answered():
		t.Fatal("Answered closed before any call answered")
	default:
	}
	g.answer(0, `"one"`)
	select {
	case <-s.Answered():
	case <-time.After(5 * time.Second):
		t.Fatal("the first answer did not close Answered")
	}
	// Resumed live (no more idle points): the second call, still in
	// flight, answers it.
	go func() {
		time.Sleep(30 * time.Millisecond)
		g.answer(1, `"two"`)
	}()
	out, err = rt.Resume(context.Background(), s.Snapshot, g, wasmhost.Resumption{Attach: s, Recycle: s, Waited: time.Since(s.At)})
	require.NoError(t, err)
	require.JSONEq(t, `["one", "two", {"n": 3}]`, string(out.Result))
	require.Equal(t, []string{`first "one"`}, out.Logs)
	require.Equal(t, 2, g.count("gate"), "no call was dispatched again")
	require.Equal(t, 3, out.Stats.Calls)
	require.Zero(t, rt.Usage().SuspendedBytes)
}

func TestRuntime_Resume_attach_refusals(t *testing.T) {
	rt := newRuntime(t, testConfig())
	g := newGatedTools()
	run := func() *wasmhost.Suspended {
		out, err := rt.Run(context.Background(), wasmhost.Program{JS: `return await tools.gate({})`, Tools: []string{"gate"},
			Suspend: idleOnly, SuspendIdle: 5 * time.Millisecond}, g)
		require.NoError(t, err)
		require.NotNil(t, out.Suspended)
		return out.Suspended
	}
	s, other := run(), run()
	ctx := context.Background()

	_, err := rt.Resume(ctx, s.Snapshot, g, wasmhost.Resumption{Attach: other})
	require.ErrorContains(t, err, "Resumption.Attach is not the Suspended of the snapshot being resumed")
	_, err = rt.Resume(ctx, s.Snapshot, g, wasmhost.Resumption{Attach: s, Recycle: other})
	require.ErrorContains(t, err, "Resumption.Recycle is not the Suspended")
	_, err = rt.Resume(ctx, s.Snapshot, g, wasmhost.Resumption{Attach: s, Results: map[int32]wasmhost.CallResult{1: {OK: true}}})
	require.ErrorContains(t, err, "Resumption.Results answers call 1, which still runs in this process")
	_, err = rt.Resume(ctx, s.Snapshot, g, wasmhost.Resumption{Waited: -time.Second})
	require.ErrorContains(t, err, "Resumption.Waited of -1s is negative")

	// Released: the charge is given back, the call's answer dropped, and
	// the suspension can no longer be attached.
	before := rt.Usage().SuspendedBytes
	other.Release()
	require.Less(t, rt.Usage().SuspendedBytes, before)
	other.Release() // a no-op the second time
	g.answer(1, `"late"`)
	select {
	case <-other.Answered():
		t.Fatal("a released suspension's call answered into it")
	case <-time.After(20 * time.Millisecond):
	}
	_, err = rt.Resume(ctx, other.Snapshot, g, wasmhost.Resumption{Attach: other})
	require.ErrorContains(t, err, "Resumption.Attach was released")
	// Resumed elsewhere, as if moved: its call is dispatched again.
	go func() {
		<-g.arrived
		<-g.arrived
		<-g.arrived
		g.answer(2, `"again"`)
	}()
	out, err := rt.Resume(ctx, other.Snapshot, g, wasmhost.Resumption{})
	require.NoError(t, err)
	require.JSONEq(t, `"again"`, string(out.Result))
	require.Equal(t, 3, g.count("gate"))

	// Not idle: nothing to attach.
	out, err = rt.Run(ctx, wasmhost.Program{JS: `return await tools.gate({})`, Tools: []string{"gate"},
		Suspend: func(wasmhost.Quiescence) bool { return true }}, g)
	require.NoError(t, err)
	require.False(t, out.Suspended.Idle)
	_, err = rt.Resume(ctx, out.Suspended.Snapshot, g, wasmhost.Resumption{Attach: out.Suspended})
	require.ErrorContains(t, err, "Resumption.Attach is not an idle suspension")

	s.Release()
	require.Zero(t, rt.Usage().SuspendedBytes)
}

func TestRuntime_Run_suspendIdle_invalidPrograms(t *testing.T) {
	rt := sharedRuntime(t)
	for _, tc := range []struct {
		name string
		p    wasmhost.Program
		want string
	}{
		{"negative", wasmhost.Program{JS: `return 1`, Suspend: idleOnly, SuspendIdle: -time.Millisecond}, "Program.SuspendIdle of -1ms is negative"},
		{"without Suspend", wasmhost.Program{JS: `return 1`, SuspendIdle: time.Millisecond}, "Program.SuspendIdle needs Program.Suspend"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rt.Run(context.Background(), tc.p, &tools{})
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// A call's arguments stay counted against MaxInFlightArgBytes across an
// attached resume, until the call answers the resumed run.
func TestRuntime_Resume_attach_argumentsInFlightStayCounted(t *testing.T) {
	rt := newRuntime(t, testConfig())
	d := &tools{}
	// 600 bytes in flight of the 1,000 allowed: a second such call is
	// refused while the first runs, and allowed once it answered.
	prog := wasmhost.Program{JS: `
		const big = "x".repeat(580);
		const p = tools.slow({ms: 300, big});
		await new Promise(r => setTimeout(r, 100));
		let first;
		try { await tools.echo({big}); first = "ok"; } catch (e) { first = e.code; }
		await p;
		const second = await tools.echo({big});
		return [first, second.big.length];`,
		Tools: toolNames, Limits: api.Limits{MaxInFlightArgBytes: 1000},
		Suspend: idleOnly, SuspendIdle: 10 * time.Millisecond}
	out, err := rt.Run(context.Background(), prog, d)
	out, err, n := resumeIdle(rt, out, err, d, wasmhost.Resumption{Suspend: idleOnly, SuspendIdle: prog.SuspendIdle})
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 2, "suspended on the timer, then on the slow call")
	require.JSONEq(t, `["INVALID_ARGS", 580]`, string(out.Result))
	d.wg.Wait()
	require.Len(t, d.seen(), 2, "slow once, the allowed echo once")
}

// Every equivalence program gives what it gives straight when it is
// suspended at every idle point (slow calls, timers) and resumed attached.
func TestRuntime_Resume_idleSuspensionIsEquivalent(t *testing.T) {
	rt := newRuntime(t, testConfig())
	ctx := context.Background()
	world := &wasmhost.World{Seed: 7}
	limits := api.Limits{MaxCallArgBytes: 4096}
	total := 0
	for _, tc := range equivalencePrograms {
		t.Run(tc.name, func(t *testing.T) {
			straightTools := &recordingTools{}
			out, err := rt.Run(ctx, wasmhost.Program{JS: tc.js, Tools: suspendTools, World: world, Limits: limits}, straightTools)
			straight := record(out, err, straightTools)

			tools := &recordingTools{}
			p := wasmhost.Program{JS: tc.js, Tools: suspendTools, World: world, Limits: limits, Suspend: idleOnly, SuspendIdle: time.Millisecond}
			out, err = rt.Run(ctx, p, tools)
			out, err, n := resumeIdle(rt, out, err, tools, wasmhost.Resumption{Suspend: idleOnly, SuspendIdle: p.SuspendIdle})
			total += n
			require.Equal(t, straight, record(out, err, tools), "after %d idle suspensions", n)
		})
	}
	require.Positive(t, total)
	require.Zero(t, rt.Usage().SuspendedBytes)
}

func TestSuspended_End(t *testing.T) {
	rt := newRuntime(t, testConfig())
	suspend := func() *wasmhost.Suspended {
		out, err := rt.Run(context.Background(), wasmhost.Program{JS: `console.log("before"); await new Promise(r => setTimeout(r, 10000));`,
			Suspend: idleOnly, SuspendIdle: 5 * time.Millisecond, Limits: api.Limits{WallTime: 20 * time.Second}}, &tools{})
		require.NoError(t, err)
		require.NotNil(t, out.Suspended)
		return out.Suspended
	}
	cause := errors.New("the caller gave up")
	for _, tc := range []struct {
		name  string
		cause error
		kind  api.Kind
		msg   string
	}{
		{"wall deadline", context.DeadlineExceeded, api.KindTimeout, "the program exceeded its wall time limit of 20s"},
		{"cancelled", cause, api.KindAbort, "the run was cancelled"},
		{"closed", wasmhost.ErrClosed, api.KindAbort, "the runtime was closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := suspend()
			require.Positive(t, rt.Usage().SuspendedBytes)
			time.Sleep(5 * time.Millisecond)
			out, err := s.End(tc.cause)
			var re *wasmhost.RunError
			require.ErrorAs(t, err, &re)
			require.Equal(t, tc.kind, re.Kind)
			require.Equal(t, tc.msg, re.Message)
			require.ErrorIs(t, err, tc.cause)
			require.Equal(t, []string{"before"}, re.Logs)
			require.Greater(t, out.Stats.Wall, 5*time.Millisecond, "the wall time counts the time suspended")
			require.Zero(t, rt.Usage().SuspendedBytes, "End releases the suspension")
		})
	}
}

// Runs suspended at idle points with calls in flight, answered at random
// times from other goroutines, all resume attached and give their results,
// and leave nothing charged.
func TestRuntime_Resume_idleHammer(t *testing.T) {
	rt := newRuntime(t, testConfig())
	const runs = 24
	var wg sync.WaitGroup
	var suspensions atomic.Int64
	errs := make(chan error, runs)
	for i := range runs {
		wg.Go(func() {
			// Half the runs on a dispatcher that runs a lone awaited call
			// on the lent goroutine (handed over at the idle point).
			var d wasmhost.Dispatcher
			dispatched := func() int64 { return 0 }
			if i%2 == 0 {
				td := &tools{}
				defer td.wg.Wait()
				d, dispatched = td, func() int64 { td.wg.Wait(); return int64(len(td.seen())) }
			} else {
				ld := &lendingTools{}
				d, dispatched = ld, func() int64 { return ld.inline.Load() + ld.others.Load() }
			}
			ms := func() int { return 1 + rand.IntN(40) }
			js := fmt.Sprintf(`
				const r = await Promise.all([tools.slow({ms: %d}), tools.slow({ms: %d}),
					new Promise(res => setTimeout(() => res(%d), %d))]);
				await tools.slow({ms: %d});
				return r[2];`, ms(), ms(), i, ms(), ms())
			p := wasmhost.Program{JS: js, Tools: toolNames, Suspend: idleOnly, SuspendIdle: time.Duration(1+rand.IntN(3000)) * time.Microsecond}
			out, err := rt.Run(context.Background(), p, d)
			out, err, n := resumeIdle(rt, out, err, d, wasmhost.Resumption{Suspend: idleOnly, SuspendIdle: p.SuspendIdle})
			suspensions.Add(int64(n))
			switch {
			case err != nil:
				errs <- fmt.Errorf("run %d: %w", i, err)
			case string(out.Result) != fmt.Sprint(i):
				errs <- fmt.Errorf("run %d returned %s", i, out.Result)
			case dispatched() != 3:
				errs <- fmt.Errorf("run %d dispatched %d calls, not 3", i, dispatched())
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Positive(t, suspensions.Load())
	u := rt.Usage()
	require.Zero(t, u.SuspendedBytes)
	require.Zero(t, u.CommittedBytes)
	require.Zero(t, u.Runs)
}

// An idle suspension's charge is committed memory: a run that does not fit
// beside it waits; the run resuming from it is admitted with the charge
// counted toward its limit, so it fits where a new run would not.
func TestRuntime_Resume_idleChargeCountsTowardTheResume(t *testing.T) {
	const limit = 16 << 20
	rt := newRuntime(t, testConfig().WithPool(0).WithLimits(api.Limits{MemoryBytes: limit}).
		WithMaxCommittedMemory(limit).WithAdmissionWait(0))
	ctx := context.Background()
	// About 6 MiB of heap the snapshot holds (random, so that no block is
	// the image's or zero).
	prog := wasmhost.Program{JS: `
		const a = new Float64Array(768 * 1024);
		for (let i = 0; i < a.length; i++) a[i] = Math.random();
		await new Promise(r => setTimeout(r, 50));
		return a.length;`, Suspend: idleOnly, SuspendIdle: 5 * time.Millisecond}
	for _, attach := range []bool{true, false} {
		t.Run(fmt.Sprintf("attach %v", attach), func(t *testing.T) {
			out, err := rt.Run(ctx, prog, &tools{})
			require.NoError(t, err)
			s := out.Suspended
			require.NotNil(t, s)
			held := rt.Usage().SuspendedBytes
			require.Greater(t, held, int64(6<<20))

			_, err = rt.Run(ctx, wasmhost.Program{JS: `return 1`}, &tools{})
			require.ErrorIs(t, err, wasmhost.ErrBusy, "a run at the limit does not fit beside the held snapshot")
			require.ErrorContains(t, err, "MiB of suspended runs' snapshots")

			rs := wasmhost.Resumption{Recycle: s, Waited: time.Since(s.At)}
			if attach {
				rs.Attach = s
			}
			out, err = rt.Resume(ctx, s.Snapshot, &tools{}, rs)
			require.NoError(t, err, "admitted with the snapshot's charge counted toward its limit")
			require.JSONEq(t, `786432`, string(out.Result))
			u := rt.Usage()
			require.Zero(t, u.SuspendedBytes)
			require.Zero(t, u.CommittedBytes)
		})
	}
}

// lendingTools is an IdleDispatcher that runs the one awaited call on the
// lent goroutine, for as long as its "ms" says; other calls run on
// goroutines of their own. It counts both kinds.
type lendingTools struct {
	mu             sync.Mutex
	held           []func()
	inline, others atomic.Int64
}

func (d *lendingTools) Dispatch(_ string, args json.RawMessage, done func(wasmhost.CallResult)) {
	var a struct{ MS int }
	_ = json.Unmarshal(args, &a)
	d.mu.Lock()
	d.held = append(d.held, func() {
		time.Sleep(time.Duration(a.MS) * time.Millisecond)
		done(wasmhost.CallResult{OK: true, Value: args})
	})
	d.mu.Unlock()
}

func (d *lendingTools) take() []func() {
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.held
	d.held = nil
	return h
}

func (d *lendingTools) Flush() {
	for _, f := range d.take() {
		d.others.Add(1)
		go f()
	}
}

func (d *lendingTools) Idle(_ context.Context, _ func()) {
	h := d.take()
	if len(h) != 1 {
		for _, f := range h {
			d.others.Add(1)
			go f()
		}
		return
	}
	d.inline.Add(1)
	h[0]()
}

// A run lent to IdleDispatcher.Idle for a call that outlasts SuspendIdle
// is handed over at the idle point and suspended there, while the call
// goes on on the lent goroutine; its outcome answers the resumed run.
func TestRuntime_Run_suspendIdle_handsOverALentGoroutine(t *testing.T) {
	rt := newRuntime(t, testConfig())
	d := &lendingTools{}
	start := time.Now()
	out, err := rt.Run(context.Background(), wasmhost.Program{JS: `
		const quick = await tools.call({ms: 0, n: 1});
		const slow = await tools.call({ms: 400, n: 2});
		return [quick.n, slow.n];`, Tools: []string{"call"}, Suspend: idleOnly, SuspendIdle: 20 * time.Millisecond}, d)
	require.NoError(t, err)
	s := out.Suspended
	require.NotNil(t, s, "suspended while the lent goroutine runs the slow call")
	require.Less(t, time.Since(start), 300*time.Millisecond, "Run returned before the call did")
	require.Equal(t, []wasmhost.PendingCall{{ID: 2, Name: "call", Args: json.RawMessage(`{"ms":400,"n":2}`), State: wasmhost.CallDispatched}}, s.Calls)
	require.Zero(t, rt.Usage().CommittedBytes)
	out, err, n := resumeIdle(rt, out, err, d, wasmhost.Resumption{Suspend: idleOnly, SuspendIdle: 20 * time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.JSONEq(t, `[1, 2]`, string(out.Result))
	require.Equal(t, int64(2), d.inline.Load(), "both calls ran on a lent goroutine, once each")
	require.Zero(t, d.others.Load())
}
