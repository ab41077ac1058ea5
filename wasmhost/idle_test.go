package wasmhost_test

import (
	"context"
	"encoding/json"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"

	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/wasmhost"
)

// idler is an IdleDispatcher that holds calls until Flush or Idle, and
// records the protocol as the Runtime drives it.
type idler struct {
	mu      sync.Mutex
	events  []string
	held    []heldCall
	flushed bool // Flush was called at least once

	// inline runs the held call on Idle's goroutine; nil means Idle only
	// flushes.
	inline func(ctx context.Context, c heldCall, handover func())
}

type heldCall struct {
	name string
	args json.RawMessage
	done func(wasmhost.CallResult)
}

func (d *idler) log(e string) {
	d.mu.Lock()
	d.events = append(d.events, e)
	d.mu.Unlock()
}

func (d *idler) Dispatch(name string, args json.RawMessage, done func(wasmhost.CallResult)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.flushed {
		d.events = append(d.events, "dispatch before the first flush")
	}
	d.events = append(d.events, "dispatch "+name)
	d.held = append(d.held, heldCall{name, append(json.RawMessage(nil), args...), done})
}

// take empties the held calls.
func (d *idler) take() []heldCall {
	d.mu.Lock()
	defer d.mu.Unlock()
	held := d.held
	d.held = nil
	return held
}

// Flush answers every held call from a goroutine of its own (echo).
func (d *idler) Flush() {
	d.mu.Lock()
	d.flushed = true
	d.mu.Unlock()
	for _, c := range d.take() {
		go c.done(wasmhost.CallResult{OK: true, Value: c.args})
	}
}

func (d *idler) Idle(ctx context.Context, handover func()) {
	held := d.take()
	d.log("idle with " + strconv.Itoa(len(held)))
	if len(held) == 1 && d.inline != nil {
		d.inline(ctx, held[0], handover)
		return
	}
	for _, c := range held {
		go c.done(wasmhost.CallResult{OK: true, Value: c.args})
	}
}

func (d *idler) list() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.events...)
}

func runIdler(t *testing.T, rt *wasmhost.Runtime, d *idler, js string, limits api.Limits) (wasmhost.Outcome, error) {
	t.Helper()
	return rt.Run(context.Background(), wasmhost.Program{JS: js, Tools: []string{"echo", "stuck"}, Limits: limits}, d)
}

func TestIdle_sequentialAwaitsRunInline(t *testing.T) {
	rt := sharedRuntime(t)
	d := &idler{inline: func(_ context.Context, c heldCall, _ func()) {
		c.done(wasmhost.CallResult{OK: true, Value: c.args})
	}}
	out, err := runIdler(t, rt, d, `let s = 0; for (const n of [1, 2, 3]) s += (await tools.echo({n})).n; return s`, api.Limits{})
	require.NoError(t, err)
	require.JSONEq(t, `6`, string(out.Result))
	require.Equal(t, []string{"dispatch echo", "idle with 1", "dispatch echo", "idle with 1", "dispatch echo", "idle with 1"}, d.list(),
		"no dispatch precedes the first Flush, and each lone awaited call goes to Idle")
}

func TestIdle_notCalledWhenMoreThanOneThingIsPending(t *testing.T) {
	rt := sharedRuntime(t)
	d := &idler{inline: func(context.Context, heldCall, func()) { t.Error("Idle ran a call while two were pending") }}
	out, err := runIdler(t, rt, d, `
		const both = await Promise.all([tools.echo({n: 1}), tools.echo({n: 2})]);
		const withTimer = await Promise.all([tools.echo({n: 3}), new Promise((r) => setTimeout(r, 5))]);
		return [both.length, withTimer[0].n];
	`, api.Limits{})
	require.NoError(t, err)
	require.JSONEq(t, `[2, 3]`, string(out.Result))
	require.NotContains(t, d.list(), "idle with 1")
}

// A call that overstays Idle is reported from elsewhere and handed over: the
// run goes on without Idle's goroutine, and what that goroutine reports
// later does not count.
func TestIdle_handover(t *testing.T) {
	rt := sharedRuntime(t)
	release := make(chan struct{})
	returned := make(chan struct{})
	d := &idler{}
	d.inline = func(ctx context.Context, c heldCall, handover func()) {
		if c.name != "stuck" {
			c.done(wasmhost.CallResult{OK: true, Value: c.args})
			return
		}
		defer close(returned)
		go func() {
			time.Sleep(20 * time.Millisecond)
			c.done(wasmhost.CallResult{Message: "gave up on stuck"})
			handover()
			handover() // a second call is ignored
		}()
		<-release
		c.done(wasmhost.CallResult{OK: true, Value: json.RawMessage(`"too late"`)})
	}
	runtime.GC()
	before := runtime.NumGoroutine()
	out, err := runIdler(t, rt, d, `
		let msg = "";
		try { await tools.stuck() } catch (e) { msg = e.message }
		return [msg, (await tools.echo({after: 1})).after];
	`, api.Limits{})
	require.NoError(t, err)
	require.JSONEq(t, `["gave up on stuck", 1]`, string(out.Result))
	require.Equal(t, 2, out.Stats.Calls)

	select {
	case <-returned:
		t.Fatal("Idle returned before it was released: the run waited for it")
	default:
	}
	close(release)
	<-returned
	testkit.WaitGoroutines(t, before, 5*time.Second)
	requireHealthy(t, rt)
}

// Idle's context ends at the wall deadline, and a handover then lets the run
// end with a timeout.
func TestIdle_contextEndsAtWallDeadline(t *testing.T) {
	rt := sharedRuntime(t)
	d := &idler{inline: func(ctx context.Context, c heldCall, handover func()) {
		<-ctx.Done()
		c.done(wasmhost.CallResult{Message: "cancelled"})
	}}
	start := time.Now()
	_, err := runIdler(t, rt, d, `await tools.stuck(); return 1`, api.Limits{WallTime: 100 * time.Millisecond})
	require.Less(t, time.Since(start), 5*time.Second)
	var re *wasmhost.RunError
	require.ErrorAs(t, err, &re)
	require.Equal(t, api.KindTimeout, re.Kind)
	require.Contains(t, re.Message, "wall time limit")
}

type panicky struct {
	idler
	inFlush bool
}

func (p *panicky) Flush() {
	if p.inFlush {
		panic("flush broke")
	}
	p.idler.Flush()
}

func (p *panicky) Idle(context.Context, func()) { panic("idle broke") }

func TestIdle_panicsEndTheRunAsTraps(t *testing.T) {
	rt := sharedRuntime(t)
	for _, inFlush := range []bool{false, true} {
		d := &panicky{inFlush: inFlush}
		_, err := rt.Run(context.Background(), wasmhost.Program{JS: `await tools.echo({}); return 1`, Tools: []string{"echo"}}, d)
		var re *wasmhost.RunError
		require.ErrorAs(t, err, &re, "flush panics: %v", inFlush)
		require.Equal(t, api.KindTrap, re.Kind)
		require.NotContains(t, re.Message, "broke", "the panic is the host's business, not the program's")
		require.ErrorContains(t, re.Cause, "broke")
	}
	requireHealthy(t, rt)
}

// A program computing for a while after making a call has the call started
// meanwhile (Flush from the poll), not when it finally waits.
func TestIdle_longComputationFlushes(t *testing.T) {
	rt := sharedRuntime(t)
	d := &idler{}
	d.inline = func(_ context.Context, c heldCall, _ func()) { c.done(wasmhost.CallResult{OK: true, Value: c.args}) }
	out, err := runIdler(t, rt, d, `
		const p = tools.echo({n: 1});
		const t = Date.now();
		while (Date.now() - t < 200) {}
		return (await p).n;
	`, api.Limits{})
	require.NoError(t, err)
	require.JSONEq(t, `1`, string(out.Result))
	require.False(t, slices.Contains(d.list(), "idle with 1"), "the call was started before the program waited: %v", d.list())
}
