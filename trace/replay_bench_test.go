package trace_test

import (
	"context"
	"testing"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/trace"
)

// BenchmarkReplay_1000calls compares replaying a program of 1,000 awaited
// calls with recording it, in the same run, with a tool that returns at once
// (so the original's time is all ptcx's). The target: replay at most
// 2x the original.
func BenchmarkReplay_1000calls(b *testing.B) {
	echo := registry.Tool{Name: "echo", Description: "Echo.", ConcurrencySafe: true,
		Body: func(_ context.Context, in api.Input) (api.Output, error) { return api.Output{Value: in.Args}, nil }}
	h := newHarness(b, []registry.Tool{echo}, executor.NewConfig())
	const code = `let s = 0; for (let i = 0; i < 1000; i++) s += (await tools.echo({i})).i; return s`
	var original, replayed time.Duration
	for b.Loop() {
		began := time.Now()
		r, rec := h.run(b, "bench", code, 1)
		original += time.Since(began)
		if !r.OK() || len(rec.Calls) != 1000 {
			b.Fatalf("the original failed: %s (%d calls)", r.Text, len(rec.Calls))
		}
		h.mu.Lock()
		h.records = nil
		h.mu.Unlock()

		began = time.Now()
		rep, err := trace.Replay(context.Background(), rec, trace.ReplayConfig{Runtime: testkit.Sandbox(b)})
		replayed += time.Since(began)
		if err != nil || !rep.OK() {
			b.Fatalf("the replay failed: %v %+v", err, rep.Differences)
		}
	}
	b.ReportMetric(float64(original.Microseconds())/float64(b.N), "original-µs/op")
	b.ReportMetric(float64(replayed.Microseconds())/float64(b.N), "replay-µs/op")
	b.ReportMetric(replayed.Seconds()/original.Seconds(), "replay/original")
}
