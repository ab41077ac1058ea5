package executor_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/executor"
)

// Results reach the program in completion order, with the real guest:
// Promise.race of an 800 ms call and a 10 ms one submitted after it picks
// the fast one, which resolves long before the slow one ends.
func TestExecute_raceResolvesTheFastCallFirst(t *testing.T) {
	w := newAdvWorld(t, 0)
	e := newExecutor(t, w.reg, executor.NewConfig().WithRuntime(realRuntime(t)))
	r, took := advRun(t, e, w, `
		const t0 = performance.now();
		const winner = await Promise.race([
			tools.nap({ms: 800, n: 1}).then(() => "slow"),
			tools.nap({ms: 10, n: 2}).then(() => "fast"),
		]);
		return {winner, ms: performance.now() - t0};
	`, nil, 30*time.Second)
	var got struct {
		Winner string
		MS     float64
	}
	require.NoError(t, json.Unmarshal([]byte(programResult(t, r)), &got))
	t.Logf("the 10 ms call resolved after %.1f ms; the run took %v", got.MS, took)
	require.Equal(t, "fast", got.Winner)
	// Held behind the slow call it would take 800 ms; the bound is loose
	// only for loaded machines.
	require.Less(t, got.MS, 400.0, "the fast call's result waited for the slow one")
	require.GreaterOrEqual(t, took, 800*time.Millisecond, "the slow call is still awaited at settlement")
}

// An exclusive call keeps its barrier with the real guest: it waits for the
// calls submitted before it, runs alone, and the calls after it wait for
// its post-execute; post-execute listeners never overlap.
func TestExecute_exclusiveBarrierAndSerialPostExecute(t *testing.T) {
	w := newAdvWorld(t, 0)
	var in, peak, posts atomic.Int64
	var exclDone atomic.Bool
	var lateStarted atomic.Int64 // calls after the exclusive one that began before its post-execute ended
	cfg := executor.NewConfig().WithRuntime(realRuntime(t)).
		WithPostExecute(func(_ context.Context, req executor.Request, v json.RawMessage) (executor.PostDecision, error) {
			if !req.Nested {
				return executor.PostDecision{}, nil
			}
			if n := in.Add(1); n > peak.Load() {
				peak.Store(n)
			}
			time.Sleep(2 * time.Millisecond)
			if req.Tool == "excl" {
				exclDone.Store(true)
			}
			in.Add(-1)
			posts.Add(1)
			return executor.PostDecision{}, nil
		}).
		WithOnStart(func(s executor.Start) {
			var a struct{ N int }
			_ = json.Unmarshal(s.Args, &a)
			if s.Tool == "nap" && a.N == 2 && !exclDone.Load() {
				lateStarted.Add(1)
			}
		})
	e := newExecutor(t, w.reg, cfg)
	r, _ := advRun(t, e, w, `
		const before = [];
		for (let i = 0; i < 8; i++) before.push(tools.nap({ms: 5 + i, n: 1}));
		const x = tools.excl({n: 1});
		const after = [];
		for (let i = 0; i < 8; i++) after.push(tools.nap({ms: 1, n: 2}));
		const all = await Promise.all([...before, x, ...after]);
		return all.length;
	`, nil, 30*time.Second)
	require.JSONEq(t, `17`, programResult(t, r))
	require.Zero(t, w.overlaps.Load(), "the exclusive call overlapped with another body")
	require.Zero(t, lateStarted.Load(), "a later call started before the exclusive call's post-execute ended")
	require.EqualValues(t, 17, posts.Load())
	require.EqualValues(t, 1, peak.Load(), "post-execute listeners overlapped")
}
