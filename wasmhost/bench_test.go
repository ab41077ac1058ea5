package wasmhost_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/bench"
	"github.com/ptcx/ptcx/wasmhost"
)

// The end-to-end workloads are bench/'s (go test -bench ./bench, ptcx
// bench); these are the sandbox's share of two of them, below the
// executor, which bench/ cannot isolate.

// echo answers every call at once, inside Dispatch, with its arguments.
var echo = wasmhost.DispatcherFunc(func(_ string, args json.RawMessage, done func(wasmhost.CallResult)) {
	done(wasmhost.CallResult{OK: true, Value: args})
})

// job is bench's workload name expanded with p.
func job(b *testing.B, name string, p bench.Params) bench.Job {
	b.Helper()
	w, err := bench.Lookup(name)
	if err != nil {
		b.Fatal(err)
	}
	j, err := w.Expand(p)
	if err != nil {
		b.Fatal(err)
	}
	return j
}

// runChecked runs p's JavaScript and checks its answer.
func runChecked(b *testing.B, rt *wasmhost.Runtime, p bench.Program, tools []string) {
	out, err := rt.Run(context.Background(), wasmhost.Program{JS: p.JS, Tools: tools}, echo)
	if err != nil {
		b.Fatal(err)
	}
	if err := bench.CheckAnswer(p, out.Result); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRuntime_Run_trivial is the sandbox's share of bench's
// trivial_e2e: a fresh instance, the engine and prelude initialised, the
// program compiled and run, its output collected.
func BenchmarkRuntime_Run_trivial(b *testing.B) {
	rt := newRuntime(b, testConfig())
	j := job(b, "trivial_e2e", bench.Params{})
	b.ReportAllocs()
	for b.Loop() {
		runChecked(b, rt, j.Warmup(), j.Tools)
	}
}

// BenchmarkRuntime_Run_nestedCall is the sandbox's share of bench's
// per_call_await: a dispatcher that answers at once, (t(N) − t(0)) / N with
// t(0) the same program without calls, measured first.
func BenchmarkRuntime_Run_nestedCall(b *testing.B) {
	benchNestedCall(b, testConfig())
}

// benchNestedCall is BenchmarkRuntime_Run_nestedCall on a Runtime of cfg.
func benchNestedCall(b *testing.B, cfg wasmhost.Config) {
	const calls = 2000
	rt := newRuntime(b, cfg.WithLimits(api.Limits{MaxCalls: calls}))
	j := job(b, "per_call_await", bench.Params{Calls: calls})
	var base time.Duration
	for range 20 {
		start := time.Now()
		runChecked(b, rt, j.Base[0], j.Tools)
		base += time.Since(start)
	}
	base /= 20
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		runChecked(b, rt, j.Warmup(), j.Tools)
	}
	perRun := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(perRun-base)/calls, "ns/call")
}
