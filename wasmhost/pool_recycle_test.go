package wasmhost_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// TestRuntime_Run_recycles: an instance whose run settled by itself
// without growing its memory joins the pool again; any other is closed.
func TestRuntime_Run_recycles(t *testing.T) {
	rt := newRuntime(t, testConfig())
	requireHealthy(t, rt)
	recycles := recycledPerRun(t, rt) > 0
	tests := []struct {
		name     string
		js       string
		limits   api.Limits
		suspend  bool
		recycled bool
	}{
		{"a result", `return 1`, api.Limits{}, false, true},
		{"a thrown error", `throw new Error("no")`, api.Limits{}, false, true},
		{"a nested call", `return (await tools.echo({n: 1})).n`, api.Limits{}, false, true},
		{"memory grown", `globalThis.big = new Array(300000).fill(0).map((_, i) => "s" + i); return 0`, api.Limits{}, false, false},
		{"stopped at its compute limit", `for (;;) {}`, api.Limits{ComputeTime: 50 * time.Millisecond}, false, false},
		{"suspended", `return (await tools.echo({n: 1})).n`, api.Limits{}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := rt.PoolStats().Recycled
			p := wasmhost.Program{JS: tt.js, Tools: toolNames, Limits: tt.limits}
			if tt.suspend {
				p.Suspend = func(wasmhost.Quiescence) bool { return true }
			}
			out, err := rt.Run(context.Background(), p, &tools{})
			if tt.suspend {
				require.NoError(t, err)
				require.NotNil(t, out.Suspended)
			}
			got := rt.PoolStats().Recycled - before
			if tt.recycled && recycles {
				require.Equal(t, int64(1), got, "recycled before Run returned (%v)", err)
			} else {
				require.Zero(t, got, "not recycled (%v)", err)
			}
			requireHealthy(t, rt) // on a recycled instance, when there is one
		})
	}
}

// TestRuntime_Run_recycledIsNew: a run on a recycled instance sees what a
// run on a new one does, for a program that changes everything it can
// without growing its memory (the isolation property test has more).
func TestRuntime_Run_recycledIsNew(t *testing.T) {
	rt := newRuntime(t, testConfig().WithPool(1))
	const probe = `return [typeof globalThis.leak, Object.keys(Object.prototype).length, typeof Math.random(), performance.now() < 60000]`
	first, re, _ := runJS(t, rt, probe, api.Limits{})
	require.Nil(t, re)
	for range 20 {
		_, re, _ := runJS(t, rt, `globalThis.leak = 1; Object.prototype.x = 2; Math.random = () => 0; return 0`, api.Limits{})
		require.Nil(t, re)
		got, re, _ := runJS(t, rt, probe, api.Limits{})
		require.Nil(t, re)
		require.JSONEq(t, string(first.Result), string(got.Result))
	}
	s := rt.PoolStats()
	require.GreaterOrEqual(t, s.Recycled, 40*recycledPerRun(t, rt), "every run was recycled: %+v", s)
	require.LessOrEqual(t, s.Idle, 2*s.Size)
	var v []any
	require.NoError(t, json.Unmarshal(first.Result, &v))
	require.Equal(t, []any{"undefined", 0.0, "number", true}, v)
}

// recycledPerRun is how many instances a settled run gives back to the
// pool: one, on every engine (Recycles). Any other engine fails the test
// until it says.
func recycledPerRun(t *testing.T, rt *wasmhost.Runtime) int64 {
	t.Helper()
	switch e := engineUnderTest(); e {
	case wasmhost.EngineWazero, wasmhost.EngineWasmtime:
		require.True(t, wasmhost.Recycles(rt), "%s recycles the instances of settled runs", e)
		return 1
	default:
		t.Fatalf("engine %q: say whether it recycles", e)
		return 0
	}
}
