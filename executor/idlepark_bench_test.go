package executor_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// BenchmarkExecutor_nestedCall_parkIdle is one awaited nested call through
// the executor on the real sandbox, a program awaiting 1,000 echo calls one
// at a time, with idle parking off and on (the calls answer long before the
// grace, so nothing parks: what is left is the run's quiescence, built at
// each pause to ask whether to suspend, and the hand-over timer armed
// around each inline call). Compare the two per-call figures of one run,
// alternated: ratios only.
func BenchmarkExecutor_nestedCall_parkIdle(b *testing.B) {
	const calls = 1000
	reg := ptcRegistry(b, registry.Tool{Name: "echo", ConcurrencySafe: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"i":{"type":"integer"}}}`),
		Body: func(_ context.Context, in api.Input) (api.Output, error) {
			return api.Output{Value: in.Args}, nil
		}})
	rt := realRuntime(b)
	program := codeCall(`let s = 0; for (let i = 0; i < 1000; i++) s += (await tools.echo({i})).i; return s;`, nil)
	base := codeCall(`let s = 0; for (let i = 0; i < 1000; i++) s += i; return s;`, nil)
	for _, grace := range []time.Duration{0, executor.ParkIdleGrace} {
		b.Run(map[bool]string{false: "off", true: "on"}[grace > 0], func(b *testing.B) {
			e, err := executor.New(reg, executor.NewConfig().WithRuntime(rt).WithParkIdle(grace))
			if err != nil {
				b.Fatal(err)
			}
			run := func(c executor.Call) {
				if r := e.Execute(context.Background(), c); !r.OK() {
					b.Fatal(r.Text)
				}
			}
			var without time.Duration
			for range 10 {
				start := time.Now()
				run(base)
				without += time.Since(start)
			}
			without /= 10
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				run(program)
			}
			perRun := time.Since(start) / time.Duration(b.N)
			b.ReportMetric(float64(perRun-without)/calls, "ns/call")
			// A loaded machine may hold a call past the grace: the parks
			// are then part of the figure, and shown.
			b.ReportMetric(float64(e.IdleParkStats().Parks), "parks")
		})
	}
}
