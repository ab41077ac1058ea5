package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A job's twin is the twin workload's own job for the same round: its
// kind, programs (and per-call base) and sample count, with no twin of
// its own; every twin has the kind, unit and scale of its workload, so the
// two medians are of the same thing.
func TestExpand_twin(t *testing.T) {
	p, err := Params{Runs: 20, Calls: 10}.Check()
	require.NoError(t, err)
	for _, w := range Workloads {
		if w.Twin == "" {
			continue
		}
		tw, err := Lookup(w.Twin)
		require.NoError(t, err)
		require.Equal(t, []any{w.Unit, w.Scale}, []any{tw.Unit, tw.Scale}, w.Name)
		j, err := w.expand(p, 4, 2)
		require.NoError(t, err)
		require.NotNil(t, j.Twin, w.Name)
		tw.Twin = ""
		want, err := tw.expand(p, 4, 2)
		require.NoError(t, err)
		require.Equal(t, want, *j.Twin, w.Name)
		require.Nil(t, j.Twin.Twin, "%s: the twin's own twin is not measured", w.Name)
		require.Equal(t, tw.Kind, j.Twin.Kind, w.Name)
		require.Equal(t, 2, j.Twin.Samples, w.Name)
		require.NotEqual(t, j.Programs, j.Twin.Programs, "%s: the twin runs its own programs", w.Name)
	}
	// A workload without a twin has none in its job.
	w, err := Lookup("trivial_e2e")
	require.NoError(t, err)
	j, err := w.expand(p, 0, 2)
	require.NoError(t, err)
	require.Nil(t, j.Twin)
}
