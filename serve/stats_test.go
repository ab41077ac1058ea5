package serve_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/serve"
)

// An execution's stats carry its program's compute time and peak memory,
// a failed one's up to its failure, whatever stopped it; an execution
// whose program never ran reports 0 for both.
func TestServer_stats_sayWhatTheProgramUsed(t *testing.T) {
	ts := newServer(t, nil)
	for _, tt := range []struct {
		name         string
		req          serve.ExecutionRequest
		status       string
		kind         api.Kind
		minComputeMS float64
	}{
		{"completed", serve.ExecutionRequest{Code: `let s = 0; for (let i = 0; i < 1e5; i++) s += i; return s`}, serve.StatusCompleted, "", 0.001},
		{"stopped by its compute limit", serve.ExecutionRequest{Code: `while (true) {}`, Limits: &serve.RunLimits{TimeoutMS: 200}},
			serve.StatusFailed, api.KindTimeout, 200},
		{"out of memory", serve.ExecutionRequest{Code: `const a = []; while (true) a.push("x".repeat(1000) + a.length)`, Limits: &serve.RunLimits{MemoryMB: 8}},
			serve.StatusFailed, api.KindMemory, 0.001},
		{"microtasks out of memory", serve.ExecutionRequest{Code: `const spin = () => Promise.resolve().then(() => spin()); spin(); await new Promise(() => {})`,
			Limits: &serve.RunLimits{MemoryMB: 8}}, serve.StatusFailed, api.KindMemory, 0.001},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, err := ts.client(keyA).Execute(ctx(t), tt.req)
			require.NoError(t, err)
			require.Equal(t, tt.status, st.Status)
			if tt.kind != "" {
				require.Equal(t, tt.kind, st.Error.Kind, st.Error.Message)
			}
			require.NotNil(t, st.Stats)
			require.GreaterOrEqual(t, st.Stats.ComputeMS, tt.minComputeMS)
			require.Positive(t, st.Stats.MemoryBytes)
		})
	}

	st, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: `return (`})
	require.NoError(t, err)
	require.Equal(t, serve.StatusFailed, st.Status)
	require.Equal(t, serve.Stats{DurationMS: st.Stats.DurationMS}, *st.Stats, "no program ran")
}
