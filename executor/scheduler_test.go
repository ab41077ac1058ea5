package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// gated is a tool whose bodies block until released, recording how many run
// at once.
type gated struct {
	running, peak, started atomic.Int64
	release                chan struct{}
	mu                     sync.Mutex
	log                    *[]string
}

func newGated(log *[]string) *gated { return &gated{release: make(chan struct{}), log: log} }

func (g *gated) record(e string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	*g.log = append(*g.log, e)
}

func (g *gated) events() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(*g.log)
}

// body blocks the call whose "id" argument is id until release or gate[id]
// is closed.
func (g *gated) body(gates map[string]chan struct{}) registry.Body {
	return func(ctx context.Context, in api.Input) (api.Output, error) {
		var a struct{ ID string }
		_ = json.Unmarshal(in.Args, &a)
		g.started.Add(1)
		n := g.running.Add(1)
		for {
			p := g.peak.Load()
			if n <= p || g.peak.CompareAndSwap(p, n) {
				break
			}
		}
		g.record("start:" + a.ID)
		select {
		case <-g.release:
		case <-gates[a.ID]:
		case <-ctx.Done():
			g.running.Add(-1)
			g.record("cancelled:" + a.ID)
			return api.Output{}, ctx.Err()
		}
		g.running.Add(-1)
		g.record("end:" + a.ID)
		return api.ValueOutput(a.ID)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

const idSchema = `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`

func schedulerFixture(t *testing.T, g *gated, gates map[string]chan struct{}) *registry.Registry {
	t.Helper()
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{
		Name: "safe", InputSchema: json.RawMessage(idSchema), ConcurrencySafe: true, Body: g.body(gates),
	}))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{
		Name: "exclusive", InputSchema: json.RawMessage(idSchema), Body: g.body(gates),
	}))
	return reg
}

// program submits calls in order, lets the test act, then awaits them all.
func program(calls [][2]string, during func(d wasmhost.Dispatcher), results *[]wasmhost.CallResult) fakeRuntime {
	return func(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		var chs []<-chan wasmhost.CallResult
		for _, c := range calls {
			chs = append(chs, submit(d, c[0], fmt.Sprintf(`{"id":%q}`, c[1])))
		}
		if during != nil {
			during(d)
		}
		for _, ch := range chs {
			select {
			case r := <-ch:
				*results = append(*results, r)
			case <-ctx.Done():
				return wasmhost.Outcome{}, &wasmhost.RunError{Kind: api.KindAbort, Message: "cancelled", Cause: ctx.Err()}
			}
		}
		return wasmhost.Outcome{}, nil
	}
}

// Acceptance 15a: three concurrency-safe calls overlap.
func TestScheduler_concurrencySafeCallsOverlap(t *testing.T) {
	var log []string
	g := newGated(&log)
	reg := schedulerFixture(t, g, nil)
	var results []wasmhost.CallResult
	rt := program([][2]string{{"safe", "a"}, {"safe", "b"}, {"safe", "c"}}, func(wasmhost.Dispatcher) {
		waitFor(t, "three bodies running", func() bool { return g.running.Load() == 3 })
		close(g.release)
	}, &results)
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(rt))
	r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("return")})
	require.True(t, r.OK(), r.Text)
	require.EqualValues(t, 3, g.peak.Load())
	require.Len(t, results, 3)
}

// Acceptance 15b: MaxParallel bounds the overlap.
func TestScheduler_maxParallel(t *testing.T) {
	var log []string
	g := newGated(&log)
	gates := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{}), "c": make(chan struct{})}
	reg := schedulerFixture(t, g, gates)
	var results []wasmhost.CallResult
	rt := program([][2]string{{"safe", "a"}, {"safe", "b"}, {"safe", "c"}}, func(wasmhost.Dispatcher) {
		waitFor(t, "two bodies running", func() bool { return g.running.Load() == 2 })
		time.Sleep(20 * time.Millisecond) // give a wrong scheduler the chance to start a third
		require.EqualValues(t, 2, g.started.Load(), "the third call must wait for a slot")
		close(gates["a"])
		waitFor(t, "the third call to start", func() bool { return g.started.Load() == 3 })
		close(gates["b"])
		close(gates["c"])
	}, &results)
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(rt).WithMaxParallel(2))
	r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("return")})
	require.True(t, r.OK(), r.Text)
	require.EqualValues(t, 2, g.peak.Load())
}

// Acceptance 15c: an exclusive call waits for earlier calls to commit, and
// later calls wait for its post-execute.
func TestScheduler_exclusiveBarrier(t *testing.T) {
	var log []string
	g := newGated(&log)
	close(g.release) // bodies finish at once; only ordering matters
	reg := schedulerFixture(t, g, nil)
	cfg := executor.NewConfig().WithPostExecute(func(ctx context.Context, req executor.Request, v json.RawMessage) (executor.PostDecision, error) {
		if !req.Nested {
			return executor.PostDecision{}, nil
		}
		var id string
		_ = json.Unmarshal(v, &id)
		time.Sleep(2 * time.Millisecond) // a slow commit must still hold the barrier
		g.record("post:" + id)
		return executor.PostDecision{}, nil
	})
	var results []wasmhost.CallResult
	rt := program([][2]string{{"safe", "a"}, {"safe", "b"}, {"exclusive", "x"}, {"safe", "c"}}, nil, &results)
	e := newExecutor(t, reg, cfg.WithRuntime(rt))
	r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("return")})
	require.True(t, r.OK(), r.Text)

	ev := g.events()
	pos := func(e string) int {
		i := slices.Index(ev, e)
		require.GreaterOrEqual(t, i, 0, "missing %s in %v", e, ev)
		return i
	}
	require.Less(t, pos("post:a"), pos("start:x"), ev)
	require.Less(t, pos("post:b"), pos("start:x"), ev)
	require.Less(t, pos("end:x"), pos("post:x"), ev)
	require.Less(t, pos("post:x"), pos("start:c"), "later calls wait for the exclusive call's post-execute: %v", ev)
	for _, e := range ev[pos("start:x")+1 : pos("end:x")] {
		require.NotContains(t, e, "start:", "the exclusive call runs alone: %v", ev)
	}
}

// Acceptance 15d: policy stages never overlap, and results commit in
// completion order: each reaches the program as soon as its own body is
// done, while slower calls submitted before it still run; notifications
// carry the completion sequence number and the body's own duration.
func TestScheduler_policySerialCommitsInCompletionOrder(t *testing.T) {
	var log []string
	g := newGated(&log)
	gates := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{}), "c": make(chan struct{})}
	reg := schedulerFixture(t, g, gates)
	var inPolicy, policyPeak atomic.Int64
	var commitMu sync.Mutex
	var commits []string
	notes := map[string]executor.Notification{}
	cfg := executor.NewConfig().
		WithPreExecute(func(ctx context.Context, req executor.Request) (executor.Decision, error) {
			if n := inPolicy.Add(1); n > policyPeak.Load() {
				policyPeak.Store(n)
			}
			time.Sleep(time.Millisecond)
			inPolicy.Add(-1)
			return executor.Decision{}, nil
		}).
		WithPostExecute(func(ctx context.Context, req executor.Request, v json.RawMessage) (executor.PostDecision, error) {
			if req.Nested {
				commitMu.Lock()
				defer commitMu.Unlock()
				commits = append(commits, req.ID)
			}
			return executor.PostDecision{}, nil
		}).
		WithOnResult(func(n executor.Notification) {
			if n.Nested {
				commitMu.Lock()
				defer commitMu.Unlock()
				notes[n.ID] = n
			}
		})
	var got []string
	rt := fakeRuntime(func(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		chs := map[string]<-chan wasmhost.CallResult{}
		for _, id := range []string{"a", "b", "c"} {
			chs[id] = submit(d, "safe", fmt.Sprintf(`{"id":%q}`, id))
		}
		waitFor(t, "three bodies running", func() bool { return g.running.Load() == 3 })
		// Finish in reverse order: each result arrives while the calls
		// submitted before it are still running.
		for _, id := range []string{"c", "b", "a"} {
			time.Sleep(5 * time.Millisecond) // bodies of measurably different lengths
			close(gates[id])
			select {
			case r := <-chs[id]:
				var s string
				require.NoError(t, json.Unmarshal(r.Value, &s))
				got = append(got, s)
			case <-time.After(10 * time.Second):
				t.Errorf("%s finished but its result did not reach the program while earlier calls ran", id)
				return wasmhost.Outcome{}, nil
			}
		}
		return wasmhost.Outcome{}, nil
	})
	e := newExecutor(t, reg, cfg.WithRuntime(rt))
	r := e.Execute(context.Background(), executor.Call{ID: "run", Name: "run_code", Args: runCode("return")})
	require.True(t, r.OK(), r.Text)

	require.EqualValues(t, 1, policyPeak.Load(), "policy stages must not overlap")
	require.Equal(t, []string{"c", "b", "a"}, got)
	require.Equal(t, []string{"run:ptc:3", "run:ptc:2", "run:ptc:1"}, commits)
	require.EqualValues(t, 1, notes["run:ptc:3"].Seq)
	require.EqualValues(t, 2, notes["run:ptc:2"].Seq)
	require.EqualValues(t, 3, notes["run:ptc:1"].Seq)
	// Each body ran from the common start until its gate opened.
	require.Less(t, notes["run:ptc:3"].Body, notes["run:ptc:2"].Body)
	require.Less(t, notes["run:ptc:2"].Body, notes["run:ptc:1"].Body)
	require.Less(t, notes["run:ptc:2"].Body, notes["run:ptc:2"].Duration+time.Nanosecond)
}

// Post-execute listeners never run concurrently, however many bodies
// finish at once.
func TestScheduler_postExecuteNeverOverlaps(t *testing.T) {
	var log []string
	g := newGated(&log)
	reg := schedulerFixture(t, g, nil)
	var in, peak, seen atomic.Int64
	cfg := executor.NewConfig().WithMaxParallel(16).
		WithPostExecute(func(ctx context.Context, req executor.Request, v json.RawMessage) (executor.PostDecision, error) {
			if !req.Nested {
				return executor.PostDecision{}, nil
			}
			if n := in.Add(1); n > peak.Load() {
				peak.Store(n)
			}
			time.Sleep(time.Millisecond) // long enough for a wrong scheduler to overlap
			in.Add(-1)
			seen.Add(1)
			return executor.PostDecision{}, nil
		})
	var calls [][2]string
	for i := range 16 {
		calls = append(calls, [2]string{"safe", strconv.Itoa(i)})
	}
	var results []wasmhost.CallResult
	rt := program(calls, func(wasmhost.Dispatcher) {
		waitFor(t, "sixteen bodies running", func() bool { return g.running.Load() == 16 })
		close(g.release) // all finish at once
	}, &results)
	e := newExecutor(t, reg, cfg.WithRuntime(rt))
	r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("return")})
	require.True(t, r.OK(), r.Text)
	require.Len(t, results, 16)
	require.EqualValues(t, 16, seen.Load())
	require.EqualValues(t, 1, peak.Load(), "post-execute listeners overlapped")
}

// Acceptance 16a: at settlement, queued calls are abandoned (never started,
// no start notification) and in-flight ones are awaited.
func TestScheduler_settlementAbandonsQueuedAwaitsInFlight(t *testing.T) {
	var log []string
	g := newGated(&log)
	gates := map[string]chan struct{}{"a": make(chan struct{})}
	reg := schedulerFixture(t, g, gates)
	var mu sync.Mutex
	var starts []string
	notes := map[string]api.Result{}
	cfg := executor.NewConfig().WithMaxParallel(1).
		WithOnStart(func(s executor.Start) {
			mu.Lock()
			defer mu.Unlock()
			starts = append(starts, s.ID)
		}).
		WithOnResult(func(n executor.Notification) {
			mu.Lock()
			defer mu.Unlock()
			notes[n.ID] = n.Result
		})
	defer executor.SetSettlingHook(func() { close(gates["a"]) })()

	replies := make([]<-chan wasmhost.CallResult, 0, 3)
	rt := fakeRuntime(func(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		replies = append(replies, submit(d, "safe", `{"id":"a"}`), submit(d, "safe", `{"id":"b"}`), submit(d, "exclusive", `{"id":"c"}`))
		waitFor(t, "a to start", func() bool { return g.started.Load() == 1 })
		return wasmhost.Outcome{}, nil // the program returns without awaiting
	})
	e := newExecutor(t, reg, cfg.WithRuntime(rt))
	r := e.Execute(context.Background(), executor.Call{ID: "run", Name: "run_code", Args: runCode("return")})
	require.True(t, r.OK(), r.Text)

	require.Equal(t, []string{"start:a", "end:a"}, g.events(), "only the in-flight call ran, to its end")
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"run", "run:ptc:1"}, starts, "abandoned calls get no start notification")
	require.True(t, notes["run:ptc:1"].OK(), "the in-flight call was awaited")
	for _, id := range []string{"run:ptc:2", "run:ptc:3"} {
		require.Equal(t, api.CodeAbortedBeforeDispatch, notes[id].Err.Code, id)
		require.Contains(t, notes[id].Err.Message, "abandoned")
	}
	for i, ch := range replies {
		res := await(t, ch)
		require.Equal(t, i == 0, res.OK, "reply %d: %+v", i, res)
	}
}

// Acceptance 16b: cancelling the outer call reaches in-flight nested bodies.
func TestScheduler_outerCancellationReachesBodies(t *testing.T) {
	var log []string
	g := newGated(&log)
	reg := schedulerFixture(t, g, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var results []wasmhost.CallResult
	rt := program([][2]string{{"safe", "a"}, {"safe", "b"}}, func(wasmhost.Dispatcher) {
		waitFor(t, "two bodies running", func() bool { return g.running.Load() == 2 })
		cancel()
	}, &results)
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(rt))
	r := e.Execute(ctx, executor.Call{Name: "run_code", Args: runCode("return")})

	require.Equal(t, api.CodeCodeRunFailed, r.Err.Code)
	require.Equal(t, api.KindAbort, r.Err.Kind)
	require.ErrorIs(t, r.AsError(), context.Canceled)
	ev := g.events()
	require.Contains(t, ev, "cancelled:a")
	require.Contains(t, ev, "cancelled:b")
	require.Zero(t, g.running.Load(), "run_code returns only after in-flight bodies ended")
}
