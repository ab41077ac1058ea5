package wasmhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"

	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/wasmhost"
)

// Adversarial tests of the IdleDispatcher protocol, the hand-over, the
// watchdog, the mmap'd linear memory and the metered guest.

// advIdler is an IdleDispatcher whose behaviour each test chooses. Calls
// are held until Flush or Idle. By default Flush answers held calls from
// goroutines of their own (echo) and Idle answers the lone call inline.
type advIdler struct {
	mu   sync.Mutex
	held []heldCall
	wg   sync.WaitGroup

	flush func(d *advIdler, held []heldCall)                                       // nil: echo each from a goroutine
	idle  func(d *advIdler, ctx context.Context, held []heldCall, handover func()) // nil: echo inline
}

func (d *advIdler) Dispatch(name string, args json.RawMessage, done func(wasmhost.CallResult)) {
	d.mu.Lock()
	d.held = append(d.held, heldCall{name, append(json.RawMessage(nil), args...), done})
	d.mu.Unlock()
}

func (d *advIdler) take() []heldCall {
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.held
	d.held = nil
	return h
}

func (d *advIdler) goEcho(c heldCall) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		c.done(wasmhost.CallResult{OK: true, Value: c.args})
	}()
}

func (d *advIdler) Flush() {
	held := d.take()
	if d.flush != nil {
		d.flush(d, held)
		return
	}
	for _, c := range held {
		d.goEcho(c)
	}
}

func (d *advIdler) Idle(ctx context.Context, handover func()) {
	held := d.take()
	if d.idle != nil {
		d.idle(d, ctx, held, handover)
		return
	}
	for _, c := range held {
		c.done(wasmhost.CallResult{OK: true, Value: c.args})
	}
}

// runAdv runs js with d and fails the test if Run does not return within
// bound; unhang is then called to let it go.
func runAdv(t *testing.T, rt *wasmhost.Runtime, ctx context.Context, d wasmhost.Dispatcher, js string, limits api.Limits, bound time.Duration, unhang func()) (wasmhost.Outcome, error, time.Duration) {
	t.Helper()
	type res struct {
		out wasmhost.Outcome
		err error
	}
	ch := make(chan res, 1)
	start := time.Now()
	go func() {
		out, err := rt.Run(ctx, wasmhost.Program{JS: js, Tools: []string{"echo", "stuck", "other"}, Limits: limits}, d)
		ch <- res{out, err}
	}()
	select {
	case r := <-ch:
		return r.out, r.err, time.Since(start)
	case <-time.After(bound):
	}
	if unhang != nil {
		unhang()
	}
	select {
	case r := <-ch:
		t.Errorf("Run did not return within %v; it returned after %v once unhung: %v", bound, time.Since(start), r.err)
		return r.out, r.err, time.Since(start)
	case <-time.After(20 * time.Second):
		t.Fatalf("Run did not return within %v, nor 20 s after being unhung", bound)
	}
	return wasmhost.Outcome{}, nil, 0
}

func runErr(t *testing.T, err error) *wasmhost.RunError {
	t.Helper()
	var re *wasmhost.RunError
	require.True(t, errors.As(err, &re), "not a RunError: %v", err)
	return re
}

// An Idle that neither runs nor starts the call, and a Flush that starts
// it: the run goes on through Flush.
func TestAdvIdle_idleDoesNothingFlushStarts(t *testing.T) {
	rt := sharedRuntime(t)
	var idles atomic.Int64
	d := &advIdler{idle: func(d *advIdler, _ context.Context, held []heldCall, _ func()) {
		idles.Add(1)
		d.mu.Lock()
		d.held = append(held, d.held...) // put it back, untouched
		d.mu.Unlock()
	}}
	out, err, _ := runAdv(t, rt, context.Background(), d, `let s = 0; for (let i = 1; i <= 3; i++) s += (await tools.echo({i})).i; return s`,
		api.Limits{WallTime: 5 * time.Second}, 10*time.Second, nil)
	require.NoError(t, err)
	require.JSONEq(t, `6`, string(out.Result))
	require.EqualValues(t, 3, idles.Load())
	d.wg.Wait()
}

// A dispatcher that never starts anything (Idle and Flush drop the calls):
// the run ends at its wall limit, not later.
func TestAdvIdle_nothingEverStartsEndsAtWallLimit(t *testing.T) {
	rt := sharedRuntime(t)
	drop := func(*advIdler, []heldCall) {}
	d := &advIdler{flush: drop, idle: func(*advIdler, context.Context, []heldCall, func()) {}}
	_, err, elapsed := runAdv(t, rt, context.Background(), d, `await tools.echo({}); return 1`,
		api.Limits{WallTime: 200 * time.Millisecond}, 5*time.Second, nil)
	re := runErr(t, err)
	require.Equal(t, api.KindTimeout, re.Kind)
	require.Contains(t, re.Message, "wall time limit")
	require.Less(t, elapsed, 3*time.Second)
}

// handover called twice, after the outcome; the Idle goroutine reports again
// later (ignored); and handover called again long after Idle returned,
// while the run is driven by another goroutine: ignored, no second driver
// (which -race would see).
func TestAdvIdle_handoverAbuse(t *testing.T) {
	rt := sharedRuntime(t)
	runtime.GC()
	before := runtime.NumGoroutine()
	var late sync.WaitGroup
	var handovers []func()
	var hmu sync.Mutex
	d := &advIdler{}
	// A poll after the stuck call was made flushes it (the program busy-
	// waits just before): it then fails as if given up, from elsewhere.
	d.flush = func(d *advIdler, held []heldCall) {
		for _, c := range held {
			if c.name == "stuck" {
				c.done(wasmhost.CallResult{Message: "given up"})
				continue
			}
			d.goEcho(c)
		}
	}
	d.idle = func(d *advIdler, ctx context.Context, held []heldCall, handover func()) {
		hmu.Lock()
		handovers = append(handovers, handover)
		hmu.Unlock()
		if len(held) != 1 {
			for _, c := range held {
				d.goEcho(c)
			}
			return
		}
		c := held[0]
		switch c.name {
		case "stuck": // report from elsewhere, hand over twice, report again
			c.done(wasmhost.CallResult{Message: "given up"})
			handover()
			handover()
			time.Sleep(30 * time.Millisecond)
			c.done(wasmhost.CallResult{OK: true, Value: json.RawMessage(`"too late"`)})
		default: // inline, then hand over from a goroutine after returning
			c.done(wasmhost.CallResult{OK: true, Value: c.args})
			c.done(wasmhost.CallResult{Message: "twice"})
			late.Add(1)
			go func() {
				defer late.Done()
				time.Sleep(2 * time.Millisecond)
				handover()
			}()
		}
	}
	out, err, _ := runAdv(t, rt, context.Background(), d, `
		const seen = [];
		for (let i = 0; i < 20; i++) {
			seen.push((await tools.echo({i})).i);
			let x = 0; const t = Date.now(); while (Date.now() - t < 3) x++;   // the run is driven meanwhile
			if (i % 5 == 0) { try { await tools.stuck() } catch (e) { seen.push(e.message) } }
		}
		return seen.length;
	`, api.Limits{WallTime: 20 * time.Second}, 30*time.Second, nil)
	require.NoError(t, err)
	require.JSONEq(t, `24`, string(out.Result))
	late.Wait()
	// Every handover again, now that the run has ended.
	hmu.Lock()
	for _, h := range handovers {
		h()
	}
	hmu.Unlock()
	d.wg.Wait()
	testkit.WaitGoroutines(t, before, 5*time.Second)
	requireHealthy(t, rt)
}

// handover called before the outcome is reported, then the outcome
// reported from Idle's goroutine after a while, and Idle panics afterwards
// (the panic is swallowed: the run was handed over).
func TestAdvIdle_handoverThenReportThenPanic(t *testing.T) {
	rt := sharedRuntime(t)
	d := &advIdler{}
	d.idle = func(d *advIdler, _ context.Context, held []heldCall, handover func()) {
		if len(held) != 1 {
			for _, c := range held {
				d.goEcho(c)
			}
			return
		}
		handover()
		time.Sleep(5 * time.Millisecond)
		held[0].done(wasmhost.CallResult{OK: true, Value: held[0].args})
		panic("after handing over")
	}
	out, err, _ := runAdv(t, rt, context.Background(), d, `let s = 0; for (let i = 1; i <= 5; i++) s += (await tools.echo({i})).i; return s`,
		api.Limits{WallTime: 10 * time.Second}, 15*time.Second, nil)
	require.NoError(t, err)
	require.JSONEq(t, `15`, string(out.Result))
	requireHealthy(t, rt)
}

// An Idle that blocks ignoring its context and never hands over violates
// the contract; the run should still end at its wall limit (the host
// enforces it: "a limit the host cannot enforce is not a limit").
func TestAdvIdle_blockingIdleWithoutHandoverEndsAtWallLimit(t *testing.T) {
	rt := sharedRuntime(t)
	release := make(chan struct{})
	var once sync.Once
	unhang := func() { once.Do(func() { close(release) }) }
	defer unhang()
	d := &advIdler{idle: func(_ *advIdler, _ context.Context, held []heldCall, _ func()) {
		<-release
		for _, c := range held {
			c.done(wasmhost.CallResult{Message: "released"})
		}
	}}
	_, err, elapsed := runAdv(t, rt, context.Background(), d, `await tools.stuck(); return 1`,
		api.Limits{WallTime: 200 * time.Millisecond}, 3*time.Second, unhang)
	t.Logf("took %v: %v", elapsed, err)
	re := runErr(t, err)
	require.Equal(t, api.KindTimeout, re.Kind)
}

// An Idle that calls runtime.Goexit (the goroutine driving the run ends
// without returning or panicking): the run should still end, at the latest
// at its wall limit.
func TestAdvIdle_goexitInIdleEndsAtWallLimit(t *testing.T) {
	rt := sharedRuntime(t)
	d := &advIdler{idle: func(_ *advIdler, _ context.Context, held []heldCall, _ func()) {
		runtime.Goexit()
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err, elapsed := runAdv(t, rt, ctx, d, `await tools.stuck(); return 1`,
		api.Limits{WallTime: 200 * time.Millisecond}, 3*time.Second, cancel)
	t.Logf("took %v: %v", elapsed, err)
	re := runErr(t, err)
	require.Equal(t, api.KindTimeout, re.Kind)
}

// The same Idle, with the caller cancelling: Run returns (abandoning the
// run after its grace), and when Idle finally returns its goroutine winds
// the run down without touching anything and leaves.
func TestAdvIdle_blockingIdleCancelled(t *testing.T) {
	rt := sharedRuntime(t)
	runtime.GC()
	before := runtime.NumGoroutine()
	release := make(chan struct{})
	d := &advIdler{idle: func(_ *advIdler, _ context.Context, held []heldCall, _ func()) {
		<-release
		for _, c := range held {
			c.done(wasmhost.CallResult{OK: true, Value: c.args})
		}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err, elapsed := runAdv(t, rt, ctx, d, `await tools.stuck(); return 1`, api.Limits{}, 5*time.Second, func() { close(release) })
	re := runErr(t, err)
	require.Equal(t, api.KindAbort, re.Kind)
	require.Less(t, elapsed, 3*time.Second)
	close(release)
	testkit.WaitGoroutines(t, before, 5*time.Second)
	requireHealthy(t, rt)
}

// Close while an Idle that honours its context is blocked, and while
// handed-over runs wait: every run ends as closed, the stuck Idle
// goroutines leave when released, and the Runtime refuses new runs.
func TestAdvIdle_closeDuringIdleAndHandover(t *testing.T) {
	rt := newRuntime(t, testConfig())
	runtime.GC()
	before := runtime.NumGoroutine()
	release := make(chan struct{})
	var entered atomic.Int64
	idle := func(d *advIdler, ctx context.Context, held []heldCall, handover func()) {
		if len(held) != 1 {
			for _, c := range held {
				d.goEcho(c)
			}
			return
		}
		c := held[0]
		entered.Add(1)
		switch c.name {
		case "stuck": // give up at once, hand over, stay stuck
			c.done(wasmhost.CallResult{Message: "stuck"})
			handover()
			<-release
		case "other": // wait for the run's end
			<-ctx.Done()
			c.done(wasmhost.CallResult{Message: context.Cause(ctx).Error()})
		default:
			c.done(wasmhost.CallResult{OK: true, Value: c.args})
		}
	}
	const n = 10
	errs := make(chan error, n)
	ds := make([]*advIdler, n)
	for i := range n {
		d := &advIdler{idle: idle}
		ds[i] = d
		go func() {
			_, err := rt.Run(context.Background(), wasmhost.Program{JS: `
				try { await tools.stuck() } catch {}
				try { await tools.stuck() } catch {}
				await tools.other();
				return 1`, Tools: []string{"echo", "stuck", "other"}}, d)
			errs <- err
		}()
	}
	for deadline := time.Now().Add(20 * time.Second); entered.Load() < 3*n; time.Sleep(time.Millisecond) {
		require.False(t, time.Now().After(deadline), "runs did not reach their last call: %d", entered.Load())
	}
	require.NoError(t, rt.Close(context.Background()))
	for range n {
		select {
		case err := <-errs:
			re := runErr(t, err)
			require.Equal(t, api.KindAbort, re.Kind)
			require.ErrorIs(t, err, wasmhost.ErrClosed)
		case <-time.After(10 * time.Second):
			close(release)
			t.Fatal("a run did not end after Close")
		}
	}
	_, err := rt.Run(context.Background(), wasmhost.Program{JS: `return 1`}, ds[0])
	require.ErrorIs(t, err, wasmhost.ErrClosed)
	close(release)
	for _, d := range ds {
		d.wg.Wait()
	}
	testkit.WaitGoroutines(t, before, 5*time.Second)
}

// Many runs at once, each handed over several times, with handovers racing
// the Idle's own return (done, then handover from a goroutine while Idle
// returns): every run ends right, under -race.
func TestAdvIdle_handoverRacesIdleReturn(t *testing.T) {
	rt := sharedRuntime(t)
	runtime.GC()
	before := runtime.NumGoroutine()
	idle := func(d *advIdler, _ context.Context, held []heldCall, handover func()) {
		if len(held) != 1 {
			for _, c := range held {
				d.goEcho(c)
			}
			return
		}
		c := held[0]
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			c.done(wasmhost.CallResult{OK: true, Value: c.args})
			handover()
		}()
		runtime.Gosched()
	}
	var wg sync.WaitGroup
	var bad atomic.Int64
	ds := make([]*advIdler, 100)
	for i := range ds {
		d := &advIdler{idle: idle}
		ds[i] = d
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := rt.Run(context.Background(), wasmhost.Program{JS: `
				let s = 0;
				for (let j = 0; j < 20; j++) s += (await tools.echo({j})).j;
				const both = await Promise.all([tools.echo({j: 1}), tools.echo({j: 2})]);
				return s + both[0].j + both[1].j + ` + strconv.Itoa(i), Tools: []string{"echo"}}, d)
			if err != nil || string(out.Result) != strconv.Itoa(190+3+i) {
				bad.Add(1)
				t.Logf("run %d: %s %v", i, out.Result, err)
			}
		}()
	}
	wg.Wait()
	require.Zero(t, bad.Load())
	for _, d := range ds {
		d.wg.Wait()
	}
	testkit.WaitGoroutines(t, before, 5*time.Second)
}

// recursionGuest is a minimal ptcx guest (ABI version 3) whose ptcx_start
// makes 2^depth - 1 calls of a function with no loop: f(n) { if (n) { f(n-1);
// f(n-1) } }. The meter instruments loops and bulk memory operations only,
// so this guest never polls the host while it recurses.
func recursionGuest(depth byte) []byte {
	section := func(id byte, body ...byte) []byte {
		return append([]byte{id, byte(len(body))}, body...) // every section here is < 128 bytes
	}
	name := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	fn := func(body ...byte) []byte { // no locals
		b := append([]byte{0x00}, body...)
		b = append(b, 0x0b)
		return append([]byte{byte(len(b))}, b...)
	}
	var m []byte
	m = append(m, 0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00)
	m = append(m, section(1, 5,
		0x60, 0x00, 0x01, 0x7f, // 0: () -> i32
		0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, // 1: (i32, i32) -> i32
		0x60, 0x01, 0x7f, 0x01, 0x7f, // 2: (i32) -> i32
		0x60, 0x04, 0x7f, 0x7f, 0x7f, 0x7f, 0x01, 0x7f, // 3: (i32 x4) -> i32
		0x60, 0x01, 0x7f, 0x00, // 4: (i32) -> ()
	)...)
	imp := []byte{1}
	imp = append(imp, name("ptcx")...)
	imp = append(imp, name("poll")...)
	imp = append(imp, 0x00, 0x00)
	m = append(m, section(2, imp...)...)
	m = append(m, section(3, 8, 0, 1, 2, 2, 1, 3, 2, 4)...)
	m = append(m, section(5, 1, 0x00, 0x01)...)
	exp := []byte{8}
	exp = append(append(exp, name("memory")...), 0x02, 0x00)
	for i, n := range []string{"ptcx_abi_version", "ptcx_init", "ptcx_buffer", "ptcx_prelude_bytecode", "ptcx_start", "ptcx_resume", "ptcx_timer"} {
		exp = append(append(exp, name(n)...), 0x00, byte(i+1))
	}
	exp2 := append([]byte{7}, leb(len(exp))...)
	m = append(m, append(exp2, exp...)...)
	var code []byte
	code = append(code, 8)
	code = append(code, fn(0x41, 0x03)...)                                                 // abi_version: 3
	code = append(code, fn(0x41, 0x00)...)                                                 // init: done
	code = append(code, fn(0x41, 0x80, 0x08)...)                                           // buffer: 1024
	code = append(code, fn(0x20, 0x00, 0x41, 0x04, 0x36, 0x02, 0x00, 0x41, 0x80, 0x10)...) // bytecode: *len_out = 4; return 2048
	code = append(code, fn(0x41, depth, 0x10, 0x08, 0x41, 0x00)...)                        // start: f(depth); done
	code = append(code, fn(0x41, 0x00)...)                                                 // resume
	code = append(code, fn(0x41, 0x00)...)                                                 // timer
	code = append(code, fn(0x20, 0x00, 0x04, 0x40,
		0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x08,
		0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x08,
		0x0b)...) // f
	m = append(m, 10)
	m = append(m, leb(len(code))...)
	m = append(m, code...)
	return m
}

func leb(n int) []byte {
	var b []byte
	for {
		c := byte(n & 0x7f)
		n >>= 7
		if n != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

// procStatus returns a field of /proc/self/status in bytes (Linux).
func procStatus(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

const mib = 1 << 20

// Runs that each fill most of their memory, one after the other: each
// instance's mapping is released, so neither the resident memory nor the
// address space grows with the number of runs.
func TestAdvMemory_repeatedNearLimitRuns(t *testing.T) {
	rt := sharedRuntime(t)
	requireHealthy(t, rt)
	runtime.GC()
	rss0, vm0 := procStatus(t, "VmRSS"), procStatus(t, "VmSize")
	var peak int64
	for i := range 15 {
		out, re, _ := runJS(t, rt, `
			const a = [];
			for (let i = 0; i < 24; i++) a.push(new Uint8Array(4 << 20).fill(i + 1));
			return a.reduce((s, x) => s + x[12345], 0)`, api.Limits{MemoryBytes: 128 * mib})
		require.Nil(t, re, "run %d", i)
		require.JSONEq(t, `300`, string(out.Result))
		peak = max(peak, procStatus(t, "VmRSS"))
	}
	rss1, vm1 := procStatus(t, "VmRSS"), procStatus(t, "VmSize")
	t.Logf("RSS %d -> %d MiB (peak %d), VmSize %d -> %d MiB", rss0/mib, rss1/mib, peak/mib, vm0/mib, vm1/mib)
	require.Less(t, peak-rss0, int64(600*mib), "resident memory grew with the runs: unmapped?")
	require.Less(t, vm1-vm0, int64(1024*mib), "the address space grew with the runs: reservations leaked")
}

// Many runs at once, each touching 64 MiB: all succeed, and once they are
// done their memory is returned.
func TestAdvMemory_concurrentRunsTouching64MiB(t *testing.T) {
	rt := sharedRuntime(t)
	requireHealthy(t, rt)
	runtime.GC()
	rss0, vm0 := procStatus(t, "VmRSS"), procStatus(t, "VmSize")
	var wg sync.WaitGroup
	var bad atomic.Int64
	for range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := &tools{}
			out, err := rt.Run(context.Background(), wasmhost.Program{JS: `
				const a = new Uint8Array(64 << 20);
				for (let i = 0; i < a.length; i += 4096) a[i] = 1;
				await tools.echo({});
				let s = 0; for (let i = 0; i < a.length; i += 4096) s += a[i];
				return s`, Tools: toolNames}, d)
			d.wg.Wait()
			if err != nil || string(out.Result) != strconv.Itoa(64<<20/4096) {
				bad.Add(1)
				t.Logf("%s %v", out.Result, err)
			}
		}()
	}
	wg.Wait()
	require.Zero(t, bad.Load())
	runtime.GC()
	rss1, vm1 := procStatus(t, "VmRSS"), procStatus(t, "VmSize")
	t.Logf("RSS %d -> %d MiB, VmSize %d -> %d MiB", rss0/mib, rss1/mib, vm0/mib, vm1/mib)
	require.Less(t, rss1-rss0, int64(512*mib), "the runs' memory was not returned")
	require.Less(t, vm1-vm0, int64(1024*mib), "reservations leaked")
}

// Runs that fail while their instance is being created (cancelled before
// they start, so the guest's start-up is stopped at its first poll), and
// runs that hit their memory limit: the reservation is released either way.
func TestAdvMemory_failedRunsReleaseTheirReservation(t *testing.T) {
	rt := sharedRuntime(t)
	requireHealthy(t, rt)
	runtime.GC()
	vm0 := procStatus(t, "VmSize")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for range 40 {
		_, err := rt.Run(cancelled, wasmhost.Program{JS: `return 1`}, &tools{})
		require.Error(t, err)
		_, re, _ := runJS(t, rt, `const a = []; for (;;) a.push(new Uint8Array(1 << 20))`, api.Limits{MemoryBytes: 64 * mib})
		require.NotNil(t, re)
		require.Equal(t, api.KindMemory, re.Kind)
	}
	vm1 := procStatus(t, "VmSize")
	t.Logf("VmSize %d -> %d MiB", vm0/mib, vm1/mib)
	require.Less(t, vm1-vm0, int64(2048*mib), "40 x 256 MiB of reservations leaked?")
}

// Programs that try to stall the guest without polling: each ends with a
// timeout close to its compute limit, and the guest is stopped, not
// abandoned. The operations take seconds when not interrupted (measured
// with a 30 s limit: sort 1.5 s, stringify 1 s, join 3e7 ~1.5 s, the regex
// ~5 s, BigInt 2.4 s), so the bound on the compute time charged is what
// shows they were interrupted. (Compute time is CPU time: on a loaded
// machine the elapsed time is longer, hence its generous bound.)
func TestAdvMeter_stallsEndAtTheComputeLimit(t *testing.T) {
	rt := sharedRuntime(t)
	for _, tc := range []struct {
		name    string
		js      string
		compute time.Duration
	}{
		{"sort 1e6", `const a = Array.from({length: 1e6}, (_, i) => (i * 7919) % 1000003); a.sort(); return a[0]`, 400 * time.Millisecond},
		{"sort 1e6 with a comparator", `const a = Array.from({length: 1e6}, (_, i) => (i * 7919) % 1000003); a.sort((x, y) => x - y); return a[0]`, 400 * time.Millisecond},
		{"JSON.stringify", `const a = Array.from({length: 3e5}, (_, i) => ({i, s: "v" + i, n: [i, i]})); return JSON.stringify(a).length`, 900 * time.Millisecond},
		{"join", `return new Array(3e7).join("x").length`, 100 * time.Millisecond},
		{"repeat chain", `let s = "ab"; for (let i = 0; i < 25; i++) s = s.repeat(2); return s.length`, 50 * time.Millisecond},
		{"regex backtracking", `return /^(a|aa)+$/.test("a".repeat(36) + "b")`, 100 * time.Millisecond},
		{"deep recursion, repeatedly", `function f(n) { return n === 0 ? 0 : f(n - 1) + 1 } for (;;) f(500)`, 100 * time.Millisecond},
		{"recursion until overflow, repeatedly", `function f(n) { return f(n + 1) + 1 } for (;;) { try { f(0) } catch {} }`, 100 * time.Millisecond},
		{"tight loop of a native function", `for (;;) Math.max(1, 2, 3)`, 100 * time.Millisecond},
		{"tight loop of JSON.stringify", `const o = {a: [1, 2, {b: "c"}]}; for (;;) JSON.stringify(o)`, 100 * time.Millisecond},
		{"BigInt to string", `return String(7n ** 300000n).length`, 100 * time.Millisecond},
		{"typed array sort", `return new Float64Array(2e7).sort().length`, 100 * time.Millisecond},
		{"split and join", `return "ab".repeat(1 << 21).split("").reverse().join("").length`, 100 * time.Millisecond},
		{"string concat in a loop", `let s = ""; for (;;) s += "x"`, 100 * time.Millisecond},
		{"Array.prototype.indexOf", `const a = new Array(5e6).fill(1); for (;;) a.indexOf(2)`, 100 * time.Millisecond},
		{"localeCompare sort", `const a = Array.from({length: 2e5}, (_, i) => "k" + ((i * 7919) % 200003)); a.sort((x, y) => x.localeCompare(y)); return a[0]`, 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			out, re, _ := runJS(t, rt, tc.js, api.Limits{ComputeTime: tc.compute})
			elapsed := time.Since(start)
			if re == nil {
				t.Skipf("finished within %v (compute %v): %s: not a stall on this machine", tc.compute, out.Stats.Compute, out.Result)
			}
			if re.Kind == api.KindMemory {
				t.Skipf("ran out of memory first")
			}
			require.Equal(t, api.KindTimeout, re.Kind, re.Message)
			require.Contains(t, re.Message, "compute time limit")
			require.NotErrorIs(t, re, wasmhost.ErrAbandoned, "the guest was stopped, not abandoned")
			require.Less(t, out.Stats.Compute, tc.compute+300*time.Millisecond, "the guest ran on past its compute limit")
			require.Less(t, elapsed, 5*(tc.compute+time.Second))
		})
	}
	requireHealthy(t, rt)
}

// A guest that stalls without polling is given up grace (250 ms) after its
// compute deadline by the watchdog, which is re-armed for each export's
// deadline (the instantiation arms it for the wall deadline first).
//
// The guest here recurses 2^27 times through a function without loops
// (1.1 to 1.8 s at load 4, well past the 350 ms at which it is
// abandoned), which the meter does not count (package meter's doc). The
// test waits for the abandoned guest to finish: while it runs it holds one
// of the process's Ps, and a second such guest would leave the timers none.
// (2^30 took 13 s at load 3 and over the 30 s wait at load 8 to 9.)
func TestAdvWatchdog_backsUpTheComputeDeadline(t *testing.T) {
	runtime.GC()
	before := runtime.NumGoroutine()
	rt := newRuntime(t, testConfig().WithGuest(recursionGuest(27)))
	start := time.Now()
	_, err := rt.Run(context.Background(), wasmhost.Program{JS: "x", Limits: api.Limits{ComputeTime: 100 * time.Millisecond}}, &tools{})
	elapsed := time.Since(start)
	t.Logf("took %v: %v", elapsed, err)
	re := runErr(t, err)
	require.Equal(t, api.KindTimeout, re.Kind)
	require.Less(t, elapsed, 1500*time.Millisecond, "Run waited for a guest that did not poll, far past its compute deadline plus grace")
	require.ErrorIs(t, re, wasmhost.ErrAbandoned, "the host says it left the guest behind")
	testkit.WaitGoroutines(t, before, 30*time.Second)
}
