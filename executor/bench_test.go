package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// modes runs f against the real sandbox.
func modes(b *testing.B, f func(b *testing.B, e *executor.Executor)) {
	f(b, benchExecutor(b, realRuntime(b)))
}

// benchExecutor is a ptc executor over a sandbox with an echo tool and a
// 20 ms sleep tool, both concurrency-safe.
func benchExecutor(b *testing.B, rt *wasmhost.Runtime) *executor.Executor {
	b.Helper()
	reg := registry.New()
	if err := reg.DeclareMode(registry.Deployment, api.ModePTC); err != nil {
		b.Fatal(err)
	}
	for _, tool := range []registry.Tool{
		{Name: "echo", ConcurrencySafe: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"i":{"type":"integer"}},"required":["i"]}`),
			Body: func(_ context.Context, in api.Input) (api.Output, error) {
				return api.Output{Value: in.Args}, nil
			}},
		{Name: "sleep20", ConcurrencySafe: true, Body: func(ctx context.Context, _ api.Input) (api.Output, error) {
			select {
			case <-time.After(20 * time.Millisecond):
			case <-ctx.Done():
				return api.Output{}, ctx.Err()
			}
			return api.ValueOutput(1)
		}},
	} {
		if err := reg.Register(registry.Deployment, tool); err != nil {
			b.Fatal(err)
		}
	}
	e, err := executor.New(reg, executor.NewConfig().WithRuntime(rt).WithMaxParallel(100))
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func benchRun(b *testing.B, e *executor.Executor, code string) {
	b.Helper()
	args, _ := json.Marshal(map[string]any{"code": code, "description": "bench"})
	r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: args})
	if !r.OK() {
		b.Fatal(r.Text)
	}
}

// BenchmarkRunCode_helloWorld is a whole run_code call end to end: the
// pipeline, TypeScript stripping (cached after the first call, as for a
// harness resending a program), a fresh instance, the program, the result.
// Target: ≤ 3 ms median.
func BenchmarkRunCode_helloWorld(b *testing.B) {
	modes(b, func(b *testing.B, e *executor.Executor) {
		benchRun(b, e, `return "hello"`)
		b.ResetTimer()
		for range b.N {
			benchRun(b, e, `return "hello"`)
		}
	})
}

// BenchmarkRunCode_helloWorldUncached strips a new program every time.
func BenchmarkRunCode_helloWorldUncached(b *testing.B) {
	modes(b, func(b *testing.B, e *executor.Executor) {
		b.ResetTimer()
		for i := range b.N {
			benchRun(b, e, fmt.Sprintf(`const n: number = %d; return "hello " + n`, i+b.N))
		}
	})
}

// BenchmarkRunCode_nestedCall measures one awaited nested call through the
// whole pipeline (echo tool with a schema, sequential awaits): the time of a
// run_code call making 5,000 of them, divided by 5,000 (so the run's own
// start-up adds about 0.4 µs per call). Target: ≤ 10 µs per call.
func BenchmarkRunCode_nestedCall(b *testing.B) {
	const calls = 5000
	code := fmt.Sprintf(`let s = 0; for (let i = 0; i < %d; i++) { s += (await tools.echo({i})).i } return s`, calls)
	modes(b, func(b *testing.B, e *executor.Executor) {
		benchRun(b, e, code)
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			benchRun(b, e, code)
		}
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*calls), "ns/call")
	})
}

// BenchmarkRunCode_fanOut is Promise.all over 100 calls to a 20 ms tool.
// Target: within 2x of one call (40 ms).
func BenchmarkRunCode_fanOut(b *testing.B) {
	code := `return (await Promise.all(Array.from({length: 100}, () => tools.sleep20()))).length`
	modes(b, func(b *testing.B, e *executor.Executor) {
		benchRun(b, e, code)
		b.ResetTimer()
		for range b.N {
			benchRun(b, e, code)
		}
	})
}
