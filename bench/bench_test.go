package bench_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ptcx/ptcx/bench"
	"github.com/ptcx/ptcx/bench/gojapeer"
	"github.com/ptcx/ptcx/internal/testkit"
)

// BenchmarkWorkloads runs every workload on ptcx and on goja in the same
// iteration, one sample each, and reports both medians and their ratio
// (ptcx÷goja; ptcx's alone where goja cannot measure the workload): go test -run '^$' -bench . ./bench. ptcx bench and make bench
// add the Node peers and write the report.
func BenchmarkWorkloads(b *testing.B) {
	testkit.RequireGuest(b)
	ctx := context.Background()
	p := bench.Params{Runs: 1}
	own, err := bench.NewPTCX(ctx, p)
	if err != nil {
		b.Fatal(err)
	}
	defer own.Close(ctx)
	impls := []bench.Impl{own, gojapeer.New()}
	for _, w := range bench.Workloads {
		if w.Kind == bench.Parked {
			continue // thousands of executions per sample: ptcx bench (make bench) measures them
		}
		b.Run(w.Name, func(b *testing.B) {
			var ptcx, goja []float64
			for b.Loop() {
				results, err := bench.Run(ctx, impls, []bench.Workload{w}, p, nil)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range results {
					if r.N == 0 && !r.Unsupported() {
						b.Fatalf("%s on %s: %s", r.Metric, r.Impl, r.Note)
					}
				}
				ptcx = append(ptcx, results[0].Med)
				if results[1].N > 0 {
					goja = append(goja, results[1].Med)
				}
			}
			unit := strings.ReplaceAll(w.Unit, "/", "-per-")
			b.ReportMetric(median(ptcx), "ptcx-"+unit)
			if len(goja) == 0 {
				return // suspend, resume, the pool: goja cannot
			}
			b.ReportMetric(median(goja), "goja-"+unit)
			b.ReportMetric(median(ptcx)/median(goja), "ptcx÷goja")
		})
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
