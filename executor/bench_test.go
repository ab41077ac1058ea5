package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// benchExecutor is a ptc executor over the real sandbox with an echo tool
// and a 20 ms sleep tool, both concurrency-safe.
func benchExecutor(b *testing.B) *executor.Executor {
	b.Helper()
	reg := registry.New()
	if err := reg.DeclareMode(registry.Deployment, registry.ModePTC); err != nil {
		b.Fatal(err)
	}
	for _, tool := range []registry.Tool{
		{Name: "echo", ConcurrencySafe: true, Body: func(_ context.Context, in registry.Input) (registry.Output, error) {
			return registry.Output{Value: in.Args}, nil
		}},
		{Name: "sleep20", ConcurrencySafe: true, Body: func(ctx context.Context, _ registry.Input) (registry.Output, error) {
			select {
			case <-time.After(20 * time.Millisecond):
			case <-ctx.Done():
				return registry.Output{}, ctx.Err()
			}
			return registry.ValueOutput(1)
		}},
	} {
		if err := reg.Register(registry.Deployment, tool); err != nil {
			b.Fatal(err)
		}
	}
	e, err := executor.New(reg, executor.NewConfig().WithRuntime(realRuntime(b)).WithMaxParallel(100))
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
	e := benchExecutor(b)
	benchRun(b, e, `return "hello"`)
	b.ResetTimer()
	for range b.N {
		benchRun(b, e, `return "hello"`)
	}
}

// BenchmarkRunCode_helloWorldUncached strips a new program every time.
func BenchmarkRunCode_helloWorldUncached(b *testing.B) {
	e := benchExecutor(b)
	b.ResetTimer()
	for i := range b.N {
		benchRun(b, e, fmt.Sprintf(`const n: number = %d; return "hello " + n`, i))
	}
}

// BenchmarkRunCode_nestedCall measures one awaited nested call through the
// whole pipeline (echo tool, sequential awaits), reported per call.
// Target: ≤ 10 µs per call.
func BenchmarkRunCode_nestedCall(b *testing.B) {
	const calls = 1000
	e := benchExecutor(b)
	code := fmt.Sprintf(`let s = 0; for (let i = 0; i < %d; i++) { s += (await tools.echo({i})).i } return s`, calls)
	benchRun(b, e, code)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		benchRun(b, e, code)
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*calls), "ns/call")
}

// BenchmarkRunCode_fanOut is Promise.all over 100 calls to a 20 ms tool.
// Target: within 2x of one call (40 ms).
func BenchmarkRunCode_fanOut(b *testing.B) {
	e := benchExecutor(b)
	code := `return (await Promise.all(Array.from({length: 100}, () => tools.sleep20()))).length`
	benchRun(b, e, code)
	b.ResetTimer()
	for range b.N {
		benchRun(b, e, code)
	}
}
