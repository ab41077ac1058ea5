package bench_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/bench"
)

// fakeQJS writes a qjsbench stand-in named name under dir: a shell script
// that prints lines for its RUNS argument.
func fakeQJS(t *testing.T, dir, name, body string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
}

func computeJob(t *testing.T, samples int) bench.Job {
	t.Helper()
	w, err := bench.Lookup("compute_loop")
	require.NoError(t, err)
	j, err := w.Expand(bench.Params{Runs: samples, Iterations: 10})
	require.NoError(t, err)
	return j
}

// The native peers: missing without their binary, unsupported beside
// compute_loop, and their lines read as samples with every answer checked;
// a wrong answer, a malformed line or too few lines fail the job.
func TestQJSNative(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	_, err := bench.NewQJSNative(bench.ImplQJSNativeSwitch, dir).Measure(ctx, computeJob(t, 2))
	require.ErrorIs(t, err, bench.ErrMissing)
	require.ErrorContains(t, err, "scripts/qjs-native.sh builds it")
	_, err = bench.NewQJSNative("qjs-native-other", dir).Measure(ctx, computeJob(t, 2))
	require.ErrorIs(t, err, bench.ErrMissing)

	j := computeJob(t, 2) // 10 iterations: the answer is 0+1+4+...+81 = 285
	answer := j.Warmup().Answer
	require.Equal(t, "285", answer)
	for _, tc := range []struct{ name, body, err string }{
		{"ok", `for i in $(seq "$2"); do echo "$((i * 1000)) 285"; done`, ""},
		{"wrong answer", `for i in $(seq "$2"); do echo "1000 284"; done`, "wrong answer: got 284, want 285"},
		{"malformed", `echo "nonsense"`, `not "NS JSON"`},
		{"not a number", `echo "x 285"`, "invalid syntax"},
		{"too few", `echo "1 285"`, "0 samples, want 2"},
		{"fails", `echo boom >&2; exit 3`, "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeQJS(t, dir, bench.ImplQJSNativeGoto, tc.body)
			raw, err := bench.NewQJSNative(bench.ImplQJSNativeGoto, dir).Measure(ctx, j)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, []float64{2000, 3000}, raw.Samples, "the first line is the warm-up")
		})
	}
	trivial, err := bench.Lookup("trivial_e2e")
	require.NoError(t, err)
	tj, err := trivial.Expand(bench.Params{Runs: 1})
	require.NoError(t, err)
	_, err = bench.NewQJSNative(bench.ImplQJSNativeGoto, dir).Measure(ctx, tj)
	require.ErrorIs(t, err, bench.ErrUnsupported)
}
