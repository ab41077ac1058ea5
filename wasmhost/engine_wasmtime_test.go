//go:build wasmtime

package wasmhost_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// TestEngines_sameOutcomes runs the same programs on both engines, in one
// process, and requires the same outcome of each: its result, logs and
// calls, or its error's kind and message (limits at, below and past their
// bounds among them). The whole suite also runs on each (make
// test-wasmtime); this is the side-by-side check.
func TestEngines_sameOutcomes(t *testing.T) {
	engines := map[string]*wasmhost.Runtime{}
	for _, e := range wasmhost.Engines() {
		engines[e] = newRuntime(t, testConfig().WithEngine(e).WithDeterministic(7))
	}
	require.Len(t, engines, 2)
	tests := []struct {
		name   string
		js     string
		limits api.Limits
		kind   api.Kind // "" for success
	}{
		{"a result", `return {a: 1, b: [1, 2, "x"]}`, api.Limits{}, ""},
		{"logs and calls", `console.log("hi"); const r = await tools.echo({n: 1}); console.warn(r.n); return r`, api.Limits{}, ""},
		{"the deterministic world", `return [Math.random(), Date.now(), performance.now() > 0]`, api.Limits{}, ""},
		{"a thrown error", `throw new TypeError("no")`, api.Limits{}, api.KindException},
		{"deep recursion", `function f(n) { return n ? f(n - 1) + 1 : 0 } return f(1e6)`, api.Limits{}, api.KindException},
		{"calls at their limit", `for (let i = 0; i < 3; i++) await tools.echo({}); return 3`, api.Limits{MaxCalls: 3}, ""},
		{"calls past their limit", `for (let i = 0; i < 4; i++) await tools.echo({}); return 4`, api.Limits{MaxCalls: 3}, api.KindException},
		{"output below its limit", `console.log("x".repeat(98))`, api.Limits{OutputBytes: 100}, ""},
		{"output past its limit", `console.log("x".repeat(101))`, api.Limits{OutputBytes: 100}, api.KindOutputLimit},
		{"memory within its limit", `return new Uint8Array(4 << 20).length`, api.Limits{MemoryBytes: 16 << 20}, ""},
		{"memory past its limit", `const a = []; for (;;) a.push(new Uint8Array(1 << 20))`, api.Limits{MemoryBytes: 16 << 20}, api.KindMemory},
		{"compute past its limit", `for (;;) {}`, api.Limits{ComputeTime: 200 * time.Millisecond}, api.KindTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type outcome struct {
				result, message string
				logs            []string
				calls           int
				kind            api.Kind
			}
			got := map[string]outcome{}
			for name, rt := range engines {
				out, re, _ := runJS(t, rt, tt.js, tt.limits)
				o := outcome{result: string(out.Result), logs: out.Logs, calls: out.Stats.Calls}
				if re != nil {
					o.kind, o.message = re.Kind, re.Message
				}
				require.Equal(t, tt.kind, o.kind, "%s: %s", name, o.message)
				got[name] = o
			}
			require.Equal(t, got[wasmhost.EngineWazero], got[wasmhost.EngineWasmtime])
		})
	}
}

// A snapshot taken on one engine resumes on the other: the state is the
// guest's memory and globals, whatever ran it.
func TestEngines_suspendOnOneResumeOnTheOther(t *testing.T) {
	ctx := context.Background()
	wz := newRuntime(t, testConfig().WithEngine(wasmhost.EngineWazero))
	wt := newRuntime(t, testConfig().WithEngine(wasmhost.EngineWasmtime))
	for _, pair := range [][2]*wasmhost.Runtime{{wz, wt}, {wt, wz}} {
		from, to := pair[0], pair[1]
		d := &recordingTools{}
		s := suspendAt(t, from, `const [a, b] = await Promise.all([tools.echo({a: 1}), tools.add({a: 1, b: 2})]); return [a, b];`,
			api.Limits{}, d, always)
		out, err := to.Resume(ctx, s.Snapshot, d, wasmhost.Resumption{})
		require.NoError(t, err)
		require.JSONEq(t, `[{"a": 1}, 3]`, string(out.Result))
	}
}
