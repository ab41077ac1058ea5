package executor_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// BenchmarkScheduler_nestedCall is the executor's share of one awaited
// nested call: a fake runtime dispatches sequential echo calls, so the guest
// is not measured. "inline" drives the scheduler as wasmhost does
// (IdleDispatcher: the call runs on the runtime's goroutine); "handoff" as a
// runtime that only dispatches (the sequencer and a body goroutine run it).
// On Linux it reports the process's CPU per call too (cpu-ns/op), which a
// loaded machine's waits do not inflate as they do ns/op.
func BenchmarkScheduler_nestedCall(b *testing.B) {
	reg := registry.New()
	if err := reg.DeclareMode(registry.Deployment, api.ModePTC); err != nil {
		b.Fatal(err)
	}
	if err := reg.Register(registry.Deployment, registry.Tool{Name: "echo", ConcurrencySafe: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"i":{"type":"integer"}}}`),
		Body: func(_ context.Context, in api.Input) (api.Output, error) {
			return api.Output{Value: in.Args}, nil
		}}); err != nil {
		b.Fatal(err)
	}
	benchmarkNestedCall(b, reg)
}

// BenchmarkScheduler_nestedCall_policy is BenchmarkScheduler_nestedCall
// with a policy on the tool, one member at a time and all together (labels,
// an argument's accepts, a constraint, calls per run, a cost), beside the
// same tool with none in the same run: what the data-flow rules add per
// nested call (docs/security.md, "Data flow"; docs/performance.md).
func BenchmarkScheduler_nestedCall_policy(b *testing.B) {
	private := api.Label{Confidentiality: api.Private}
	accepts := &policy.Accepts{Args: map[string]api.Label{"i": {Confidentiality: api.Secret}}}
	for _, c := range []struct {
		name string
		decl policy.Declaration
	}{
		{"none", policy.Declaration{}},
		{"labels", policy.Declaration{Labels: &private}},
		{"accepts", policy.Declaration{Accepts: accepts}},
		{"constraint", policy.Declaration{Constraints: []string{"args.i < 10"}}},
		{"counts", policy.Declaration{CallsPerRun: 1 << 30, Cost: 1}},
		{"all", policy.Declaration{Labels: &private, Accepts: accepts,
			Constraints: []string{"args.i < 10"}, CallsPerRun: 1 << 30, Cost: 1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			reg := registry.New()
			if err := reg.DeclareMode(registry.Deployment, api.ModePTC); err != nil {
				b.Fatal(err)
			}
			if err := reg.Register(registry.Deployment, registry.Tool{Name: "echo", ConcurrencySafe: true,
				InputSchema: json.RawMessage(`{"type":"object","properties":{"i":{"type":"integer"}}}`),
				Policy:      c.decl,
				Body: func(_ context.Context, in api.Input) (api.Output, error) {
					return api.Output{Value: in.Args}, nil
				}}); err != nil {
				b.Fatal(err)
			}
			benchmarkNestedCall(b, reg)
		})
	}
}

func benchmarkNestedCall(b *testing.B, reg *registry.Registry) {
	args := json.RawMessage(`{"i":1}`)
	for _, inline := range []bool{true, false} {
		name := map[bool]string{true: "inline", false: "handoff"}[inline]
		b.Run(name, func(b *testing.B) {
			rt := fakeRuntime(func(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
				idle, _ := d.(wasmhost.IdleDispatcher)
				if inline {
					idle.Flush()
				}
				ch := make(chan wasmhost.CallResult, 1)
				reply := func(r wasmhost.CallResult) { ch <- r }
				for range b.N {
					d.Dispatch("echo", args, reply)
					if inline {
						idle.Idle(ctx, func() { b.Error("handed over") })
					}
					if r := <-ch; !r.OK {
						b.Fatal(r.Message)
					}
				}
				return wasmhost.Outcome{}, nil
			})
			e, err := executor.New(reg, executor.NewConfig().WithRuntime(rt))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			if r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("return")}); !r.OK() {
				b.Fatal(r.Text)
			}
			if cpu > 0 {
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
