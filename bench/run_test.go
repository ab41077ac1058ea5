package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/bench"
	"github.com/ptcx/ptcx/bench/gojapeer"
	"github.com/ptcx/ptcx/internal/testkit"
)

// tiny is a run small enough for make test: a couple of samples of each
// workload, a short loop, ten live runs and a pool of ten.
var tiny = bench.Params{Runs: 2, Calls: 20, Iterations: 1000, Live: 10, Batch: 4}

// goja cannot snapshot or pool: those rows are missing (unsupported),
// saying why.
var gojaMissing = map[bench.Kind]string{
	bench.Suspend:    "goja cannot capture a run to bytes",
	bench.Resume:     "goja cannot capture a run to bytes",
	bench.PoolMemory: "goja has no pool of ready instances",
}

// Every workload runs on ptcx with every answer right, and on goja where
// goja can (missing, with the reason, where it cannot), and gives one
// result each of the common shape.
func TestRun_ptcxAndGoja(t *testing.T) {
	testkit.RequireGuest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := bench.NewPTCX(ctx, tiny)
	require.NoError(t, err)
	defer p.Close(ctx)
	results, err := bench.Run(ctx, []bench.Impl{p, gojapeer.New()}, bench.Workloads, tiny, nil)
	require.NoError(t, err)
	require.Len(t, results, 2*len(bench.Workloads))
	for i, r := range results {
		w := bench.Workloads[i/2]
		require.Equal(t, []string{bench.ImplPTCX, bench.ImplGoja}[i%2], r.Impl)
		require.Equal(t, w.Name, r.Metric)
		require.Equal(t, w.Unit, r.Unit)
		if why, ok := gojaMissing[w.Kind]; ok && r.Impl == bench.ImplGoja {
			require.True(t, r.Unsupported(), "%+v", r)
			require.True(t, r.Missing(), "%+v", r)
			require.Contains(t, r.Note, why)
			continue
		}
		require.Positive(t, r.N, "%s on %s: %s", r.Metric, r.Impl, r.Note)
		require.LessOrEqual(t, r.Min, r.Med)
		require.LessOrEqual(t, r.Med, r.P90)
		t.Logf("%+v", r)
	}
}
