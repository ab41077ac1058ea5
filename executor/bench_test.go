package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// cooperative is a second sandbox with cooperative interrupts, to measure
// what strict interrupts cost (see RATIONALE.md).
var (
	cooperativeOnce sync.Once
	cooperative     *wasmhost.Runtime
)

// modes runs f against the default (strict) sandbox and the cooperative one.
func modes(b *testing.B, f func(b *testing.B, e *executor.Executor)) {
	b.Run("strict", func(b *testing.B) { f(b, benchExecutor(b, realRuntime(b))) })
	b.Run("cooperative", func(b *testing.B) {
		cooperativeOnce.Do(func() {
			var err error
			cooperative, err = wasmhost.New(context.Background(), wasmhost.NewConfig().WithStrictInterrupts(false))
			if err != nil {
				b.Fatal(err)
			}
		})
		f(b, benchExecutor(b, cooperative))
	})
}

// benchExecutor is a ptc executor over a sandbox with an echo tool and a
// 20 ms sleep tool, both concurrency-safe.
func benchExecutor(b *testing.B, rt *wasmhost.Runtime) *executor.Executor {
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
// whole pipeline (echo tool, sequential awaits), reported per call.
// Target: ≤ 10 µs per call.
func BenchmarkRunCode_nestedCall(b *testing.B) {
	const calls = 1000
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
