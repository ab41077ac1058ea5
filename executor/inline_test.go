package executor_test

import (
	"context"
	"encoding/json"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/registry"
)

// Tests of the inline path: a call the program waits on alone runs on the
// runtime's goroutine (inline.go), and behaves exactly as one handed to
// the sequencer would.

// inlineCounter counts the calls run inline, by tool name.
func inlineCounter(t *testing.T) func(tool string) int64 {
	var mu sync.Mutex
	seen := map[string]int64{}
	t.Cleanup(executor.SetInlineHook(func(req executor.Request) {
		mu.Lock()
		seen[req.Tool]++
		mu.Unlock()
	}))
	return func(tool string) int64 {
		mu.Lock()
		defer mu.Unlock()
		return seen[tool]
	}
}

func TestInline_sequentialAwaitsRunInline(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	rec := &recorder{}
	e := w.executor(t, rec.hooks(executor.NewConfig()))
	inline := inlineCounter(t)
	r := runProgram(e, `
		let total = 0;
		for (const id of [1, 2, 3, 4]) total += await tools.score({id});
		return total;
	`)
	require.True(t, r.OK(), r.Text)
	require.JSONEq(t, `{"logs":[],"result":100}`, string(r.Value))
	require.EqualValues(t, 4, inline("score"), "every awaited call with nothing else in flight runs inline")

	// The phases and notifications are those of any nested call, in order.
	var nested []executor.Notification
	for _, n := range rec.notifications() {
		if n.Request.Tool == "score" {
			nested = append(nested, n)
		}
	}
	require.Len(t, nested, 4)
	for i, n := range nested {
		require.True(t, n.Request.Nested)
		require.NotEmpty(t, n.Request.Parent)
		require.True(t, n.Result.OK(), n.Result.Text)
		require.JSONEq(t, []string{"10", "20", "30", "40"}[i], string(n.Result.Value))
	}
}

func TestInline_fanOutIsNotInline(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	inline := inlineCounter(t)
	r := runProgram(e, `return await Promise.all([1, 2, 3].map((id) => tools.score({id})))`)
	require.True(t, r.OK(), r.Text)
	require.Zero(t, inline("score"), "calls that can overlap go to the sequencer")
	require.EqualValues(t, 3, w.peak.Load(), "and overlap")
}

func TestInline_denialAndFailureInline(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig().WithGuard("", func(_ context.Context, req executor.Request) (string, error) {
		if req.Tool == "write" {
			return "no writes today", nil
		}
		return "", nil
	}))
	inline := inlineCounter(t)
	r := runProgram(e, `
		const seen = [];
		try { await tools.write({path: "a", content: "b"}) } catch (e) { seen.push(e.message) }
		try { await tools.broken() } catch (e) { seen.push(e.message) }
		return seen;
	`)
	require.True(t, r.OK(), r.Text)
	require.JSONEq(t, `{"logs":[],"result":["denied by a guard of scope \"deployment\": no writes today","the disk is on fire"]}`, string(r.Value))
	require.EqualValues(t, 1, inline("write"))
	require.EqualValues(t, 1, inline("broken"))
	require.Zero(t, w.writes.Load())
}

// stuckWorld has a tool whose body ignores its context until released.
func stuckWorld(t *testing.T, timeout time.Duration) (*registry.Registry, chan struct{}, *atomic.Int64) {
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	release := make(chan struct{})
	var returned atomic.Int64
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{
		Name: "stuck", ConcurrencySafe: true, Timeout: timeout,
		Body: func(context.Context, api.Input) (api.Output, error) {
			defer returned.Add(1)
			<-release // ignores its context
			return api.ValueOutput("late")
		},
	}))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{
		Name: "echo", ConcurrencySafe: true,
		Body: func(_ context.Context, in api.Input) (api.Output, error) {
			return api.Output{Value: in.Args}, nil
		},
	}))
	return reg, release, &returned
}

// A body that ignores its timeout is left behind after cancelGrace even when
// it runs on the runtime's goroutine: the program goes on, on another one.
func TestInline_stuckBodyIsHandedOver(t *testing.T) {
	reg, release, returned := stuckWorld(t, 100*time.Millisecond)
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(realRuntime(t)))
	inline := inlineCounter(t)
	runtime.GC()
	before := runtime.NumGoroutine()

	start := time.Now()
	r := runProgram(e, `
		let message = "";
		try { await tools.stuck() } catch (e) { message = e.message }
		const after = await tools.echo({after: true});
		return {message, after};
	`)
	elapsed := time.Since(start)
	require.True(t, r.OK(), r.Text)
	require.JSONEq(t, `{"logs":[],"result":{"message":"stuck did not finish within its timeout of 100ms","after":{"after":true}}}`, string(r.Value))
	require.EqualValues(t, 1, inline("stuck"), "the stuck call ran inline")
	require.EqualValues(t, 1, inline("echo"), "and the run went on inline on its new goroutine")
	require.Less(t, elapsed, 5*time.Second, "the run did not wait for the body")
	require.Zero(t, returned.Load(), "the body is still stuck")

	close(release)
	require.Eventually(t, func() bool { return returned.Load() == 1 }, 5*time.Second, time.Millisecond)
	testkit.WaitGoroutines(t, before, 5*time.Second) // the stuck goroutine leaves once its body returns
}

// A stuck inline body with no timeout of its own still cannot hold the run
// past its wall limit.
func TestInline_stuckBodyWithoutTimeoutEndsAtWallLimit(t *testing.T) {
	reg, release, _ := stuckWorld(t, 0)
	defer close(release)
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(realRuntime(t)).
		WithLimits(api.Limits{WallTime: 2 * time.Second}))
	inline := inlineCounter(t)
	start := time.Now()
	r := runProgram(e, `await tools.stuck(); return "unreachable"`)
	// The wall limit is long enough for a loaded machine to start the
	// program and reach the call (300 ms was not, with 2 cores shared).
	require.Less(t, time.Since(start), 10*time.Second)
	require.False(t, r.OK())
	require.Equal(t, api.CodeCodeRunFailed, r.Err.Code, r.Text)
	require.Equal(t, api.KindTimeout, r.Err.Kind, r.Text)
	require.Contains(t, r.Text, "wall time limit")
	require.EqualValues(t, 1, inline("stuck"))
}

// Cancelling the run while an inline body runs cancels the body. A call
// takes the inline path only when the guest waits on it before a poll
// hands it to the sequencer, which a loaded machine can delay: the run is
// tried until one call went inline (each try must end aborted, whichever
// path its call took), at most 20 times.
func TestInline_cancellationReachesInlineBody(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	started := make(chan struct{}, 1)
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{
		Name: "wait", ConcurrencySafe: true,
		Body: func(ctx context.Context, _ api.Input) (api.Output, error) {
			started <- struct{}{}
			<-ctx.Done()
			return api.Output{}, ctx.Err()
		},
	}))
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(realRuntime(t)))
	inline := inlineCounter(t)
	for try := 1; inline("wait") == 0; try++ {
		require.LessOrEqual(t, try, 20, "no call took the inline path in 20 runs")
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		r := e.Execute(ctx, executor.Call{Name: "run_code", Args: runCode(`await tools.wait(); return 1`)})
		cancel()
		require.False(t, r.OK())
		require.Equal(t, api.KindAbort, r.Err.Kind, r.Text)
	}
	require.EqualValues(t, 1, inline("wait"))
}

// A call made before a long computation starts while the program computes:
// the runtime flushes held calls when the guest polls it.
func TestInline_callStartsDuringLongComputation(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	var startedAt atomic.Int64
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{
		Name: "mark", ConcurrencySafe: true,
		Body: func(context.Context, api.Input) (api.Output, error) {
			startedAt.Store(time.Now().UnixMilli())
			return api.ValueOutput(true)
		},
	}))
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(realRuntime(t)))
	r := runProgram(e, `
		const p = tools.mark();
		const t = Date.now();
		while (Date.now() - t < 400) {}
		const computed = Date.now();
		await p;
		return computed;
	`)
	require.True(t, r.OK(), r.Text)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	var computedAt int64
	require.NoError(t, json.Unmarshal(v.Result, &computedAt))
	require.NotZero(t, startedAt.Load())
	require.Less(t, startedAt.Load(), computedAt, "the call started before the computation ended")
}
