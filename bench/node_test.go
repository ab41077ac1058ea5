package bench_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/bench"
)

// RequireNodeEnv, set to 1 (or CI=true), makes missing Node or a missing
// `npm ci` in bench/peers fail the Node peers' test instead of skipping it.
const RequireNodeEnv = "PTCX_REQUIRE_NODE"

func requireNode(t *testing.T) {
	t.Helper()
	_, errNode := exec.LookPath("node")
	_, errPkg := os.Stat("peers/node_modules/quickjs-wasi/package.json")
	if errNode == nil && errPkg == nil {
		return
	}
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	must, _ := strconv.ParseBool(os.Getenv(RequireNodeEnv))
	if ci || must {
		t.Fatalf("Node and bench/peers' packages are required here (CI or %s is set): node: %v; quickjs-wasi: %v (make bench installs both)", RequireNodeEnv, errNode, errPkg)
	}
	t.Skipf("skipped: no Node or no npm ci in bench/peers (node: %v; quickjs-wasi: %v); make bench installs both", errNode, errPkg)
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
			results, err := bench.Run(ctx, []bench.Impl{peer}, bench.Workloads, tiny)
			require.NoError(t, err)
			require.Len(t, results, len(bench.Workloads))
			for _, r := range results {
				require.Positive(t, r.N, "%s on %s: %s", r.Metric, r.Impl, r.Note)
				t.Logf("%+v", r)
			}
		})
	}
}
