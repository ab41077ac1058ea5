//go:build wasmtime

package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/bench"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/wasmhost"
)

// ptcx on wasmtime is a peer of ptcx on wazero: every workload runs on
// both with every answer right, each under its own name, but the parked
// ones, which run on wazero alone, and the Python ones while Python does
// not run on wasmtime (wasmhost.CheckPython says why, and so does the
// result).
func TestRun_ptcxOnWasmtime(t *testing.T) {
	testkit.RequireGuest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	wz, err := bench.NewPTCX(ctx, tiny)
	require.NoError(t, err)
	defer wz.Close(ctx)
	wt, err := bench.NewPTCXEngine(ctx, tiny, wasmhost.EngineWasmtime)
	require.NoError(t, err)
	defer wt.Close(ctx)
	results, err := bench.Run(ctx, []bench.Impl{wz, wt}, bench.Workloads, tiny, nil)
	require.NoError(t, err)
	require.Len(t, results, 2*len(bench.Workloads))
	for i, r := range results {
		require.Equal(t, []string{bench.ImplPTCX, bench.ImplPTCXWasmtime}[i%2], r.Impl)
		if r.Impl == bench.ImplPTCXWasmtime && bench.Workloads[i/2].Kind == bench.Parked {
			require.True(t, r.Unsupported(), "%+v", r)
			continue
		}
		if bench.Workloads[i/2].Language == api.LanguagePython {
			engine := map[string]string{bench.ImplPTCX: wasmhost.EngineWazero, bench.ImplPTCXWasmtime: wasmhost.EngineWasmtime}[r.Impl]
			if why := wasmhost.CheckPython(engine); why != nil {
				require.True(t, r.Missing(), "%+v", r)
				require.Contains(t, r.Note, why.Error())
				continue
			}
		}
		require.Positive(t, r.N, "%s on %s: %s", r.Metric, r.Impl, r.Note)
	}
}
