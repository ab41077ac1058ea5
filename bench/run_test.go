package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/bench"
	"github.com/ptcx/ptcx/bench/gojapeer"
	"github.com/ptcx/ptcx/guest/python"
	"github.com/ptcx/ptcx/internal/testkit"
)

// tiny is a run small enough for make test: a couple of samples of each
// workload, a short loop, ten live runs and a pool of ten, two serve
// executions at a time and three parked.
var tiny = bench.Params{Runs: 2, Calls: 20, Iterations: 1000, Live: 10, Batch: 4, ServeParallel: 2, Parked: 3}

// goja cannot snapshot or pool: those rows are missing (unsupported),
// saying why.
var gojaMissing = map[bench.Kind]string{
	bench.Suspend:    "goja cannot capture a run to bytes",
	bench.Resume:     "goja cannot capture a run to bytes",
	bench.PoolMemory: "goja has no pool of ready instances",
	// The serve workloads measure ptcx serve over HTTP.
	bench.ServeLatency:    "ptcx serve over HTTP",
	bench.ServeThroughput: "ptcx serve over HTTP",
	bench.ServeClientTool: "ptcx serve over HTTP",
	bench.Parked:          "ptcx serve over HTTP",
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
		if w.Language == api.LanguagePython && r.Impl == bench.ImplGoja {
			require.True(t, r.Unsupported(), "%+v", r)
			require.Contains(t, r.Note, "goja runs TypeScript (JavaScript) programs only, not Python")
			continue
		}
		if w.Language == api.LanguagePython && python.Wasm() == nil {
			require.True(t, r.Missing(), "%+v", r)
			require.Contains(t, r.Note, "no Python guest")
			continue
		}
		if why, ok := gojaMissing[w.Kind]; ok && r.Impl == bench.ImplGoja {
			require.True(t, r.Unsupported(), "%+v", r)
			require.True(t, r.Missing(), "%+v", r)
			require.Contains(t, r.Note, why)
			continue
		}
		if r.Impl == bench.ImplGoja && (w.Kind == bench.ServeLatency || w.Kind == bench.ServeThroughput ||
			w.Kind == bench.ServeClientTool || w.Kind == bench.Parked) {
			require.True(t, r.Unsupported(), "%+v", r)
			require.Contains(t, r.Note, "ptcx serve over HTTP")
			continue
		}
		require.Positive(t, r.N, "%s on %s: %s", r.Metric, r.Impl, r.Note)
		if w.Kind == bench.Parked {
			require.Equal(t, tiny.Parked, r.N, "one sample per resume")
			for _, k := range []string{"rss_mib", "parked_mib", "park_all_s", "resume_p99_ms"} {
				require.Contains(t, r.Extra, k)
			}
			require.Positive(t, r.Extra["parked_mib"], "the parked snapshots are on disk")
			require.GreaterOrEqual(t, r.Extra["resume_p99_ms"], r.Med)
		}
		require.LessOrEqual(t, r.Min, r.Med)
		require.LessOrEqual(t, r.Med, r.P90)
		t.Logf("%+v", r)
	}
}

// A session feed whose answer is wrong fails the workload on ptcx and on
// goja, saying so: the feeds' answers are checked, not only timed.
func TestRun_sessionFeeds_wrongAnswer(t *testing.T) {
	testkit.RequireGuest(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := bench.NewPTCX(ctx, tiny)
	require.NoError(t, err)
	defer p.Close(ctx)
	for _, name := range []string{"session_feeds", "after_session"} {
		w, err := bench.Lookup(name)
		require.NoError(t, err)
		w.Feeds = append([]bench.Feed(nil), w.Feeds...)
		w.Feeds[3].Answer = "25" // grand is 24
		results, err := bench.Run(ctx, []bench.Impl{p, gojapeer.New()}, []bench.Workload{w}, tiny, nil)
		require.NoError(t, err)
		for _, r := range results {
			require.True(t, r.Failed(), "%+v", r)
			require.Contains(t, r.Note, "wrong answer: got 24, want 25")
		}
	}
}
