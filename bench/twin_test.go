package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/bench"
	"github.com/ptcx/ptcx/guest/python"
	"github.com/ptcx/ptcx/internal/testkit"
)

// ptcx-twin measures a workload's twin in the workload's rounds, with the
// twin's answers checked (per_call_await beside python_per_call_await,
// serve_e2e beside serve_client_tool), and nothing for a workload without
// one (unsupported, saying why). Every twin names a workload of the same
// unit.
func TestTwin_measuresTheTwinInTheSameRounds(t *testing.T) {
	for _, w := range bench.Workloads {
		if w.Twin == "" {
			continue
		}
		tw, err := bench.Lookup(w.Twin)
		require.NoError(t, err, w.Name)
		require.Equal(t, w.Unit, tw.Unit, w.Name)
	}
	testkit.RequireGuest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := bench.NewPTCX(ctx, tiny)
	require.NoError(t, err)
	defer p.Close(ctx)
	names := []string{"serve_e2e", "serve_client_tool", "trivial_e2e"}
	if python.Wasm() != nil {
		names = append(names, "python_per_call_await")
	}
	var ws []bench.Workload
	for _, name := range names {
		w, err := bench.Lookup(name)
		require.NoError(t, err)
		ws = append(ws, w)
	}
	results, err := bench.Run(ctx, []bench.Impl{p, p.Twin()}, ws, tiny, nil)
	require.NoError(t, err)
	require.Len(t, results, 2*len(ws))
	for i, r := range results {
		if r.Impl != bench.ImplPTCXTwin {
			require.Positive(t, r.N, "%+v", r)
			continue
		}
		w := ws[i/2]
		if w.Twin == "" {
			require.True(t, r.Unsupported(), "%+v", r)
			require.Contains(t, r.Note, "measures only a workload's twin, and trivial_e2e has none")
			continue
		}
		require.Positive(t, r.N, "%+v", r)
		require.Positive(t, r.Med, "%+v", r)
		require.Equal(t, "ptcx on "+w.Twin+", in "+w.Name+"'s rounds", r.Note)
	}
}

// A twin that is not a workload fails the job's making, naming it.
func TestTwin_unknown(t *testing.T) {
	w, err := bench.Lookup("serve_client_tool")
	require.NoError(t, err)
	w.Twin = "no_such_workload"
	_, err = bench.Run(context.Background(), []bench.Impl{bench.NewHTTPFloor()}, []bench.Workload{w}, tiny, nil)
	require.ErrorContains(t, err, `bench: workload serve_client_tool: its twin: no workload "no_such_workload"`)
}
