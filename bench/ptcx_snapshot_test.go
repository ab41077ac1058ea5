package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/bench"
	"github.com/ptcx/ptcx/internal/testkit"
)

// A snapshot or pool job of ptcx whose program gives another answer fails
// saying so, as does a program to suspend that does not wait on exactly
// its one echo call.
func TestPTCX_Measure_checksSnapshotsAndPool(t *testing.T) {
	testkit.RequireGuest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := bench.NewPTCX(ctx, tiny)
	require.NoError(t, err)
	defer p.Close(ctx)
	tests := []struct {
		name     string
		workload string
		js, want string
		err      string
	}{
		{"suspend, the right answer", "suspend", "", "", ""},
		{"suspend, a wrong answer", "suspend", "", "1", "the resumed run: wrong answer: got "},
		{"resume, a wrong answer", "resume", "", "1", "the resumed run: wrong answer: got "},
		{"resume, a global kept across", "resume", `globalThis.x = 5; await tools.echo({i: 1}); return typeof x`, `"number"`, ""},
		{"suspend, no call", "suspend", `return 1`, "1", "returned 1 without waiting on a call"},
		{"suspend, two calls", "suspend", `await Promise.all([tools.echo({i: 1}), tools.echo({i: 2})]); return 1`, "1",
			"suspended waiting on 2 calls"},
		{"suspend, another tool", "suspend", `return await tools.sleep20()`, "true", "want its one echo call"},
		{"pool, a wrong answer", "rss_per_pooled_instance", "", `"bye"`, `wrong answer: got "hello", want "bye"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := bench.Lookup(tt.workload)
			require.NoError(t, err)
			j, err := w.Expand(bench.Params{Runs: 1, Live: 2})
			require.NoError(t, err)
			if tt.js != "" {
				j.Programs[0].JS, j.Programs[0].TS = tt.js, tt.js
				j.Tools = []string{"echo", "sleep20"}
			}
			if tt.want != "" {
				j.Programs[0].Answer = tt.want
			}
			raw, err := p.Measure(ctx, j)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Len(t, raw.Samples, j.Samples)
			require.Positive(t, raw.Samples[0])
			require.NotEmpty(t, raw.Note)
		})
	}
}
