package bench_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/bench"
)

// fakeImpl records the jobs it is given and answers each with samples of
// its own making.
type fakeImpl struct {
	name    string
	log     *[]string // shared by the impls of a test: the order of the calls
	jobs    []bench.Job
	measure func(round int, j bench.Job) (bench.Raw, error)
}

func (f *fakeImpl) Name() string { return f.name }

func (f *fakeImpl) Measure(_ context.Context, j bench.Job) (bench.Raw, error) {
	*f.log = append(*f.log, f.name)
	f.jobs = append(f.jobs, j)
	return f.measure(len(f.jobs)-1, j)
}

func constant(v float64) func(int, bench.Job) (bench.Raw, error) {
	return func(_ int, j bench.Job) (bench.Raw, error) {
		s := make([]float64, j.Samples)
		for i := range s {
			s[i] = v
		}
		return bench.Raw{Samples: s}, nil
	}
}

// A latency workload's samples are split into rounds as evenly as they
// go, every implementation measured in each round, the order rotated by
// one each round; the result holds every round's samples.
func TestRun_rounds_rotateAndSplit(t *testing.T) {
	var log []string
	a := &fakeImpl{name: "a", log: &log, measure: constant(1e6)}
	b := &fakeImpl{name: "b", log: &log, measure: constant(2e6)}
	c := &fakeImpl{name: "c", log: &log, measure: constant(4e6)}
	p := bench.Params{Runs: 7, Rounds: 3}
	results, err := bench.Run(context.Background(), []bench.Impl{a, b, c}, []bench.Workload{workload(t, "trivial_e2e")}, p, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c", "b", "c", "a", "c", "a", "b"}, log)
	for _, f := range []*fakeImpl{a, b, c} {
		var samples []int
		for _, j := range f.jobs {
			samples = append(samples, j.Samples)
		}
		require.Equal(t, []int{3, 2, 2}, samples, f.name)
	}
	require.Len(t, results, 3)
	for i, want := range []struct {
		impl string
		med  float64
	}{{"a", 1}, {"b", 2}, {"c", 4}} {
		r := results[i]
		require.Equal(t, want.impl, r.Impl, "results in the order the implementations were given")
		require.Equal(t, 7, r.N)
		require.Equal(t, want.med, r.Med)
	}
}

// A workload of new programs gets new ones in every round: no program of
// one round (its warm-up included) is seen in another.
func TestRun_rounds_newProgramsEachRound(t *testing.T) {
	var log []string
	a := &fakeImpl{name: "a", log: &log, measure: constant(1)}
	_, err := bench.Run(context.Background(), []bench.Impl{a}, []bench.Workload{workload(t, "trivial_e2e_new")},
		bench.Params{Runs: 6, Rounds: 3}, nil)
	require.NoError(t, err)
	require.Len(t, a.jobs, 3)
	seen := map[string]bool{}
	for _, j := range a.jobs {
		require.Len(t, j.Programs, 3, "a warm-up and 2 samples")
		for _, prog := range j.Programs {
			require.False(t, seen[prog.TS], "%q twice", prog.TS)
			seen[prog.TS] = true
		}
	}
	require.Equal(t, `"hello 8"`, a.jobs[2].Program(1).Answer, "programs 0-2, 3-5, 6-8")
}

// A per-call value is taken against its own round's baseline: a round
// whose runs with and without calls are both slower gives the same
// per-call figure.
func TestRun_rounds_perCallAgainstOwnBase(t *testing.T) {
	var log []string
	const calls = 10
	a := &fakeImpl{name: "a", log: &log, measure: func(round int, j bench.Job) (bench.Raw, error) {
		base := float64(1e6 * (round + 1)) // each round slower than the one before
		raw := bench.Raw{}
		for range j.Samples {
			raw.Samples = append(raw.Samples, base+calls*3000) // 3 µs a call
			raw.Base = append(raw.Base, base)
		}
		return raw, nil
	}}
	results, err := bench.Run(context.Background(), []bench.Impl{a}, []bench.Workload{workload(t, "per_call_await")},
		bench.Params{Runs: 8, Rounds: 4, Calls: calls}, nil)
	require.NoError(t, err)
	require.Equal(t, 40, results[0].N, "a per-call workload takes five times Runs")
	require.Len(t, a.jobs, 4)
	require.Equal(t, 10, a.jobs[0].Samples)
	require.Equal(t, 3.0, results[0].Min)
	require.Equal(t, 3.0, results[0].P90)
}

// An implementation that fails in a round has a failed result naming the
// round, is not given the rounds after it, and the others are measured in
// every round; a missing one is asked once and reported missing.
func TestRun_rounds_failure(t *testing.T) {
	var log []string
	ok := &fakeImpl{name: "ok", log: &log, measure: constant(1e6)}
	flaky := &fakeImpl{name: "flaky", log: &log, measure: func(round int, j bench.Job) (bench.Raw, error) {
		if round == 1 {
			return bench.Raw{}, errors.New("wrong answer: got 1, want 2")
		}
		return constant(1e6)(round, j)
	}}
	missing := &fakeImpl{name: "gone", log: &log, measure: func(int, bench.Job) (bench.Raw, error) {
		return bench.Raw{}, fmt.Errorf("%w: no Node", bench.ErrMissing)
	}}
	var streamed []string
	results, err := bench.Run(context.Background(), []bench.Impl{ok, flaky, missing}, []bench.Workload{workload(t, "trivial_e2e")},
		bench.Params{Runs: 4, Rounds: 4}, func(r bench.Result) { streamed = append(streamed, r.Impl) })
	require.NoError(t, err)
	require.Equal(t, []string{"ok", "flaky", "gone", "flaky", "ok"}, log[:5])
	require.Len(t, ok.jobs, 4)
	require.Len(t, flaky.jobs, 2)
	require.Len(t, missing.jobs, 1)
	require.Equal(t, []string{"ok", "flaky", "gone"}, streamed)
	require.Equal(t, 4, results[0].N)
	require.True(t, results[1].Failed())
	require.Equal(t, "failed: round 2 of 4: wrong answer: got 1, want 2", results[1].Note)
	require.True(t, results[2].Missing())
	require.Equal(t, "missing: no Node", results[2].Note)
}

// The workloads measured by few samples of many runs each, and those ptcx
// alone measures, are measured in one round whatever Rounds says.
func TestRun_rounds_onlyLatencyAndPerCall(t *testing.T) {
	for _, w := range bench.Workloads {
		t.Run(w.Name, func(t *testing.T) {
			var log []string
			a := &pyRunner{fakeImpl: fakeImpl{name: "a", log: &log, measure: func(_ int, j bench.Job) (bench.Raw, error) {
				raw, _ := constant(1e6)(0, j)
				raw.Base = raw.Samples
				return raw, nil
			}}, runs: func(api.Language) error { return nil }} // every language
			_, err := bench.Run(context.Background(), []bench.Impl{a}, []bench.Workload{w}, bench.Params{Runs: 20, Rounds: 4}, nil)
			require.NoError(t, err)
			rounds := 1
			switch w.Kind {
			case bench.Latency, bench.PerCall, bench.Session, bench.AfterSession, bench.ServeLatency, bench.ServeClientTool:
				rounds = 4
			}
			require.Len(t, a.jobs, rounds, strings.Join(log, ","))
		})
	}
}

// A canceled run stops before the next measurement and says so.
func TestRun_rounds_canceled(t *testing.T) {
	var log []string
	ctx, cancel := context.WithCancel(context.Background())
	a := &fakeImpl{name: "a", log: &log, measure: func(round int, j bench.Job) (bench.Raw, error) {
		cancel()
		return constant(1)(round, j)
	}}
	_, err := bench.Run(ctx, []bench.Impl{a}, []bench.Workload{workload(t, "trivial_e2e")}, bench.Params{Runs: 4, Rounds: 4}, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, a.jobs, 1)

	// Ended during the last measurement of a workload: not a result of it.
	ctx, cancel = context.WithCancel(context.Background())
	b := &fakeImpl{name: "b", log: &log, measure: func(round int, j bench.Job) (bench.Raw, error) {
		cancel()
		return bench.Raw{}, ctx.Err()
	}}
	results, err := bench.Run(ctx, []bench.Impl{b}, []bench.Workload{workload(t, "trivial_e2e")}, bench.Params{Runs: 1}, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, results)
}

// An implementation missing past its first round ran before: it failed,
// saying in which round, and is not reported as a peer missing here.
func TestRun_rounds_missingLater(t *testing.T) {
	var log []string
	gone := &fakeImpl{name: "gone", log: &log, measure: func(round int, j bench.Job) (bench.Raw, error) {
		if round == 2 {
			return bench.Raw{}, fmt.Errorf("%w: node vanished", bench.ErrMissing)
		}
		return constant(1e6)(round, j)
	}}
	results, err := bench.Run(context.Background(), []bench.Impl{gone}, []bench.Workload{workload(t, "trivial_e2e")},
		bench.Params{Runs: 4, Rounds: 4}, nil)
	require.NoError(t, err)
	require.Len(t, gone.jobs, 3)
	require.True(t, results[0].Failed(), "%+v", results[0])
	require.False(t, results[0].Missing())
	require.Equal(t, "failed: round 3 of 4: missing: node vanished", results[0].Note)
}

// A workload measured in rounds gives each round's median, in round
// order; one measured in one round gives none.
func TestRun_rounds_perRoundMedians(t *testing.T) {
	var log []string
	a := &fakeImpl{name: "a", log: &log, measure: func(round int, j bench.Job) (bench.Raw, error) {
		s := make([]float64, j.Samples)
		for i := range s {
			s[i] = float64((round+1)*1e6 + i*1e5) // round r: r+1, r+1.1, … ms
		}
		return bench.Raw{Samples: s}, nil
	}}
	results, err := bench.Run(context.Background(), []bench.Impl{a}, []bench.Workload{workload(t, "trivial_e2e")},
		bench.Params{Runs: 6, Rounds: 3}, nil)
	require.NoError(t, err)
	require.InDeltaSlice(t, []float64{1.05, 2.05, 3.05}, results[0].Rounds, 1e-9)

	results, err = bench.Run(context.Background(), []bench.Impl{a}, []bench.Workload{workload(t, "trivial_e2e")},
		bench.Params{Runs: 6, Rounds: 1}, nil)
	require.NoError(t, err)
	require.Nil(t, results[0].Rounds)
}
