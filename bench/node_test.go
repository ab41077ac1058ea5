//go:build benchnode

// The Node peers' test needs Node and `npm ci` in bench/peers, which make
// bench installs and then runs it (go test -tags benchnode): make test
// stays free of Node. Built with the tag, missing Node is a failure.

package bench_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/bench"
)

func requireNode(t *testing.T) {
	t.Helper()
	_, errNode := exec.LookPath("node")
	_, errPkg := os.Stat("peers/node_modules/quickjs-wasi/package.json")
	require.NoError(t, errNode, "the Node peers' test needs Node (make bench installs it)")
	require.NoError(t, errPkg, "the quickjs-wasi peer needs npm ci in bench/peers (make bench runs it)")
}

// workerMissing are the kinds a Worker cannot measure, and why.
var workerMissing = map[bench.Kind]string{
	bench.Suspend:    "a Worker cannot be captured to bytes",
	bench.Resume:     "a Worker cannot be captured to bytes",
	bench.PoolMemory: "node-worker has no pool of ready instances",
}

// nodeMissing are the kinds neither Node peer measures (issue #36's
// sessions, whose baseline is goja, and the serve workloads), and why.
var nodeMissing = map[bench.Kind]string{
	bench.Session:         "no driver for REPL sessions",
	bench.AfterSession:    "no driver for REPL sessions",
	bench.ServeLatency:    "ptcx serve over HTTP",
	bench.ServeThroughput: "ptcx serve over HTTP",
	bench.ServeClientTool: "ptcx serve over HTTP",
	bench.Parked:          "ptcx serve over HTTP",
}

// Every workload runs on both Node peers, every answer right, but for the
// Worker's missing kinds and both peers' (nodeMissing), which say why.
func TestNode_Measure_everyWorkload(t *testing.T) {
	requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, name := range []string{bench.ImplNodeWorker, bench.ImplQuickJSWasi} {
		t.Run(name, func(t *testing.T) {
			peer, done := bench.NewNode(name, bench.NodeConfig{Modules: "peers"})
			defer done()
			results, err := bench.Run(ctx, []bench.Impl{peer}, bench.Workloads, tiny, nil)
			require.NoError(t, err)
			require.Len(t, results, len(bench.Workloads))
			for i, r := range results {
				if bench.Workloads[i].Language == api.LanguagePython {
					// Both Node peers run JavaScript only: a Python workload is
					// one they cannot measure, and say why.
					require.True(t, r.Unsupported(), "%+v", r)
					require.Contains(t, r.Note, "programs only, not Python")
					continue
				}
				if why, ok := nodeMissing[bench.Workloads[i].Kind]; ok {
					require.True(t, r.Unsupported(), "%+v", r)
					require.Contains(t, r.Note, why)
					continue
				}
				if why, ok := workerMissing[bench.Workloads[i].Kind]; ok && name == bench.ImplNodeWorker {
					require.True(t, r.Unsupported(), "%+v", r)
					require.Contains(t, r.Note, why)
					continue
				}
				require.Positive(t, r.N, "%s on %s: %s", r.Metric, r.Impl, r.Note)
				t.Logf("%+v", r)
			}
		})
	}
}

// quickjs-wasi's snapshot and pool jobs check their answers: a wrong one
// fails the job.
func TestNode_Measure_quickjsChecksSnapshots(t *testing.T) {
	requireNode(t)
	peer, done := bench.NewNode(bench.ImplQuickJSWasi, bench.NodeConfig{Modules: "peers"})
	defer done()
	for _, name := range []string{"suspend", "resume", "rss_per_pooled_instance"} {
		w, err := bench.Lookup(name)
		require.NoError(t, err)
		j, err := w.Expand(bench.Params{Runs: 1, Live: 2})
		require.NoError(t, err)
		j.Programs[0].Answer = "1"
		_, err = peer.Measure(context.Background(), j)
		require.ErrorContains(t, err, "wrong answer: got ", name)
	}
}

// A job past its bound is killed and fails, naming the bound; one within it
// runs (TestNode_Measure_everyWorkload, under the default bound).
func TestNode_Measure_timeout(t *testing.T) {
	requireNode(t)
	peer, done := bench.NewNode(bench.ImplNodeWorker, bench.NodeConfig{Modules: "peers", Timeout: time.Millisecond})
	defer done()
	results, err := bench.Run(context.Background(), []bench.Impl{peer}, bench.Workloads[:1], tiny, nil)
	require.NoError(t, err)
	require.True(t, results[0].Failed())
	require.Contains(t, results[0].Note, "context deadline exceeded (the job's bound is 1ms)")
}

// With Node but without quickjs-wasi's package, that peer is missing and
// says what to do.
func TestNewNode_noPackage(t *testing.T) {
	requireNode(t)
	peer, done := bench.NewNode(bench.ImplQuickJSWasi, bench.NodeConfig{Modules: t.TempDir()})
	defer done()
	_, err := peer.Measure(context.Background(), bench.Job{})
	require.ErrorIs(t, err, bench.ErrMissing)
	require.ErrorContains(t, err, "run npm ci in bench/peers (make bench does)")
}
