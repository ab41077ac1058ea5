package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/bench"
)

// The HTTP floor measures serve_rps's requests with nothing behind them,
// at the job's concurrency, and no other workload (unsupported, saying
// why). It needs no guest: it runs nothing.
func TestHTTPFloor_measuresServeRPSOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var ws []bench.Workload
	for _, name := range []string{"serve_rps", "serve_e2e", "trivial_e2e"} {
		w, err := bench.Lookup(name)
		require.NoError(t, err)
		ws = append(ws, w)
	}
	results, err := bench.Run(ctx, []bench.Impl{bench.NewHTTPFloor()}, ws, tiny, nil)
	require.NoError(t, err)
	require.Len(t, results, 3)
	r := results[0]
	require.Equal(t, bench.ImplHTTPFloor, r.Impl)
	require.Equal(t, "serve_rps", r.Metric)
	require.Positive(t, r.N, "%+v", r)
	require.Positive(t, r.Min, "runs per second")
	require.LessOrEqual(t, r.Min, r.Med)
	require.Contains(t, r.Note, "no run")
	for _, r := range results[1:] {
		require.True(t, r.Unsupported(), "%+v", r)
		require.Contains(t, r.Note, "measures only serve_rps's HTTP")
	}
}
