package gojapeer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/bench"
	"github.com/ptcx/ptcx/bench/gojapeer"
)

func job(t *testing.T, js, answer string) bench.Job {
	t.Helper()
	return bench.Job{Workload: "t", Kind: bench.Latency, Samples: 1,
		Programs: []bench.Program{{TS: js, JS: js, Answer: answer}}}
}

// A program's answer is checked, its throw reported, and a program that
// never ends stops at the context's end.
func TestPeer_Measure(t *testing.T) {
	g := gojapeer.New()
	raw, err := g.Measure(context.Background(), job(t, `return (await tools.echo({i: 2})).i + 1`, "3"))
	require.NoError(t, err)
	require.Len(t, raw.Samples, 1)

	_, err = g.Measure(context.Background(), job(t, `return 4`, "5"))
	require.ErrorContains(t, err, "wrong answer: got 4, want 5")

	_, err = g.Measure(context.Background(), job(t, `throw new Error("boom")`, "1"))
	require.ErrorContains(t, err, "the program threw: Error: boom")

	_, err = g.Measure(context.Background(), job(t, `return await tools.wait()`, "true"))
	require.ErrorContains(t, err, "outside the live-memory workload")

	for _, js := range []string{`for (;;) {}`, `await new Promise(() => {})`} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err = g.Measure(ctx, job(t, js, "1"))
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, js)
	}
}

// goja is missing from the snapshot and pool workloads, saying why.
func TestPeer_Measure_missingKinds(t *testing.T) {
	for _, tt := range []struct {
		kind bench.Kind
		why  string
	}{
		{bench.Suspend, "goja cannot capture a run to bytes"},
		{bench.Resume, "goja cannot capture a run to bytes"},
		{bench.PoolMemory, "goja has no pool of ready instances"},
	} {
		j := job(t, `return 1`, "1")
		j.Kind = tt.kind
		_, err := gojapeer.New().Measure(context.Background(), j)
		require.ErrorIs(t, err, bench.ErrUnsupported, tt.kind)
		require.ErrorContains(t, err, tt.why)
	}
}
