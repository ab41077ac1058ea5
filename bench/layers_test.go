package bench_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ptcx/ptcx/bench"
	"github.com/ptcx/ptcx/bench/gojapeer"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/wasmhost"
)

// BenchmarkPerCallAwait_layers splits per_call_await's figure into the
// layers of an awaited nested call, measured in the same rounds beside
// goja's: ptcx end to end (run_code through the executor: the registry,
// the arguments checked against the tool's schema, the policy phases, the
// ledger, the body on the inline path); the sandbox alone with a
// dispatcher that answers inside Dispatch (guest, imports, run loop); and
// the sandbox with a dispatcher that answers from Idle (the inline path's
// hand-over of the run's goroutine, without the executor). Each round every
// layer measures its per-call figure ((t(N) − t(0)) / N, five samples) in
// an order rotated by one; the metrics are the medians of the rounds'
// figures and of their ratios to goja's:
//
//	go test -run '^$' -bench PerCallAwait_layers -benchtime 20x ./bench
func BenchmarkPerCallAwait_layers(b *testing.B) {
	testkit.RequireGuest(b)
	ctx := context.Background()
	const calls = 2000
	own, err := bench.NewPTCX(ctx, bench.Params{})
	if err != nil {
		b.Fatal(err)
	}
	defer own.Close(ctx)
	// On wazero, as NewPTCX's sandbox, whatever PTCX_ENGINE says: the
	// layers must be layers of the same call.
	rt, err := wasmhost.New(ctx, wasmhost.NewConfig().WithEngine(wasmhost.EngineWazero))
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	w, err := bench.Lookup("per_call_await")
	if err != nil {
		b.Fatal(err)
	}
	j, err := w.Expand(bench.Params{Calls: calls})
	if err != nil {
		b.Fatal(err)
	}
	j.Samples = 5
	var park bench.Parking
	sandbox := func(d func() wasmhost.Dispatcher) func() (bench.Raw, error) {
		run := func(ctx context.Context, p bench.Program) error {
			out, err := rt.Run(ctx, wasmhost.Program{JS: p.JS, Tools: j.Tools}, d())
			if err != nil {
				return err
			}
			return bench.CheckAnswer(p, out.Result)
		}
		return func() (bench.Raw, error) { return bench.MeasureFunc(ctx, j, run, &park) }
	}
	goja := gojapeer.New()
	layers := []struct {
		name    string
		measure func() (bench.Raw, error)
	}{
		{"goja", func() (bench.Raw, error) { return goja.Measure(ctx, j) }},
		{"ptcx", func() (bench.Raw, error) { return own.Measure(ctx, j) }},
		{"sandbox", sandbox(func() wasmhost.Dispatcher { return answerAtOnce })},
		{"sandbox-idle", sandbox(func() wasmhost.Dispatcher { return &answerWhenIdle{} })},
	}
	figures := map[string][]float64{}
	round := 0
	for b.Loop() {
		this := map[string]float64{}
		for k := range layers {
			l := layers[(k+round)%len(layers)]
			raw, err := l.measure()
			if err != nil {
				b.Fatalf("%s: %v", l.name, err)
			}
			this[l.name] = (median(raw.Samples) - median(raw.Base)) / calls / 1e3
		}
		round++
		for _, l := range layers {
			figures[l.name+"-µs"] = append(figures[l.name+"-µs"], this[l.name])
			if l.name != "goja" {
				figures[l.name+"÷goja"] = append(figures[l.name+"÷goja"], this[l.name]/this["goja"])
			}
		}
	}
	for name, v := range figures {
		b.ReportMetric(median(v), name)
	}
}

// answerAtOnce answers every call inside Dispatch with its arguments.
var answerAtOnce = wasmhost.DispatcherFunc(func(_ string, args json.RawMessage, done func(wasmhost.CallResult)) {
	done(wasmhost.CallResult{OK: true, Value: args})
})

// answerWhenIdle holds the calls Dispatch receives and answers them, with
// their arguments, when the run flushes them or lends it its goroutine
// (wasmhost.IdleDispatcher): the executor's inline path without the
// executor. One run's, on the run's goroutine.
type answerWhenIdle struct {
	held []heldCall
}

type heldCall struct {
	args json.RawMessage
	done func(wasmhost.CallResult)
}

func (a *answerWhenIdle) Dispatch(_ string, args json.RawMessage, done func(wasmhost.CallResult)) {
	a.held = append(a.held, heldCall{args, done})
}

func (a *answerWhenIdle) Flush() {
	for len(a.held) > 0 {
		c := a.held[0]
		a.held = a.held[1:]
		c.done(wasmhost.CallResult{OK: true, Value: c.args})
	}
}

func (a *answerWhenIdle) Idle(context.Context, func()) { a.Flush() }
