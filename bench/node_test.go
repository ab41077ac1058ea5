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

	"github.com/ptcx/ptcx/bench"
)

func requireNode(t *testing.T) {
	t.Helper()
	_, errNode := exec.LookPath("node")
	_, errPkg := os.Stat("peers/node_modules/quickjs-wasi/package.json")
	require.NoError(t, errNode, "the Node peers' test needs Node (make bench installs it)")
	require.NoError(t, errPkg, "the quickjs-wasi peer needs npm ci in bench/peers (make bench runs it)")
}

// Every workload runs on both Node peers, every answer right.
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
			for _, r := range results {
				require.Positive(t, r.N, "%s on %s: %s", r.Metric, r.Impl, r.Note)
				t.Logf("%+v", r)
			}
		})
	}
}
