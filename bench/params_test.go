package bench_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/bench"
	"github.com/ptcx/ptcx/wasmhost"
)

// Each parameter at 1 and at its largest is taken, past either end refused
// with a *ParamError naming it; zero means its default.
func TestParams_Check_bounds(t *testing.T) {
	for _, f := range bench.ParamList {
		for _, tt := range []struct {
			v  int
			ok bool
		}{{1, true}, {f.Max, true}, {-1, false}, {f.Max + 1, false}} {
			t.Run(fmt.Sprintf("%s=%d", f.Name, tt.v), func(t *testing.T) {
				var p bench.Params
				if f.Name == "rounds" {
					p.Runs = bench.MaxRuns // rounds may be at most runs
				}
				*p.Field(f.Name) = tt.v
				got, err := p.Check()
				if tt.ok {
					require.NoError(t, err)
					require.Equal(t, tt.v, *got.Field(f.Name))
					return
				}
				var pe *bench.ParamError
				require.ErrorAs(t, err, &pe)
				require.Equal(t, bench.ParamError{Param: f.Name, Value: tt.v, Max: f.Max}, *pe)
				require.EqualError(t, err, fmt.Sprintf("bench: %s %d: want 1 to %d", f.Name, tt.v, f.Max))
			})
		}
	}
	got, err := bench.Params{}.Check()
	require.NoError(t, err)
	require.Equal(t, bench.DefaultParams(), got)
	require.Equal(t, bench.Params{Runs: 20, Calls: 2000, Iterations: 3_000_000, Live: 100, Parallel: 2, Batch: 200, Rounds: 10,
		ServeParallel: 8, Parked: 10_000}, got)
}

// Rounds defaults to 10, or to Runs when fewer; it may be Runs, not more.
func TestParams_Check_rounds(t *testing.T) {
	for _, tt := range []struct{ runs, rounds, want int }{
		{0, 0, 10}, {3, 0, 3}, {1, 0, 1}, {10, 0, 10}, {11, 0, 10}, {7, 7, 7}, {7, 1, 1},
	} {
		got, err := bench.Params{Runs: tt.runs, Rounds: tt.rounds}.Check()
		require.NoError(t, err, "%+v", tt)
		require.Equal(t, tt.want, got.Rounds, "%+v", tt)
	}
	for _, tt := range []struct{ runs, rounds, max int }{{3, 4, 3}, {1, 2, 1}, {0, 21, bench.DefaultRuns}} {
		_, err := bench.Params{Runs: tt.runs, Rounds: tt.rounds}.Check()
		var pe *bench.ParamError
		require.ErrorAs(t, err, &pe, "%+v", tt)
		require.Equal(t, bench.ParamError{Param: "rounds", Value: tt.rounds, Max: tt.max}, *pe)
	}
}

// Every parameter has a field; no other name has one.
func TestParams_Field_names(t *testing.T) {
	var p bench.Params
	for _, f := range bench.ParamList {
		require.NotNil(t, p.Field(f.Name), f.Name)
	}
	require.Nil(t, p.Field("n"))
}

// A workload expands to its programs with their answers: one program when
// every run is the same, a warm-up and one per sample when each is new, a
// baseline without calls for a per-call workload; the peers get JavaScript.
func TestWorkload_Expand(t *testing.T) {
	p := bench.Params{Runs: 3, Calls: 4, Iterations: 10}
	lookup := func(name string) bench.Workload {
		w, err := bench.Lookup(name)
		require.NoError(t, err)
		return w
	}
	j, err := lookup("trivial_e2e_new").Expand(p)
	require.NoError(t, err)
	require.Len(t, j.Programs, 4)
	require.Equal(t, `const n: number = 0; return "hello " + n`, j.Warmup().TS)
	require.Equal(t, `"hello 3"`, j.Program(2).Answer)
	require.NotContains(t, j.Program(2).JS, ": number")

	j, err = lookup("per_call_await").Expand(p)
	require.NoError(t, err)
	require.Len(t, j.Programs, 1)
	require.Equal(t, "6", j.Program(5).Answer, "0+1+2+3")
	require.Len(t, j.Base, 1)
	require.Equal(t, "0", j.Base[0].Answer)
	require.Contains(t, j.Base[0].TS, "i < 0;")

	j, err = lookup("compute_loop").Expand(p)
	require.NoError(t, err)
	require.Equal(t, "285", j.Warmup().Answer, "the sum of i*i below 10")

	j, err = lookup("runs_per_second").Expand(p)
	require.NoError(t, err)
	require.Equal(t, 1, j.Samples, "ceil(3/10)")

	_, err = bench.Lookup("nope")
	require.ErrorContains(t, err, `no workload "nope": want one of trivial_e2e, trivial_e2e_new`)
}

// An answer is compared as JSON, whitespace aside; anything else is wrong.
func TestCheckAnswer(t *testing.T) {
	p := bench.Program{TS: "return 1", Answer: `{"a":1}`}
	require.NoError(t, bench.CheckAnswer(p, []byte(`{ "a": 1 }`)))
	require.ErrorContains(t, bench.CheckAnswer(p, []byte(`{"a":2}`)), `wrong answer: got {"a":2}, want {"a":1}`)
	require.ErrorContains(t, bench.CheckAnswer(p, []byte(`{`)), "is not JSON")
}

// The largest --live is a pool size wasmhost takes (rss_per_pooled_instance
// makes a pool of Live instances).
func TestParams_liveFitsAPool(t *testing.T) {
	require.LessOrEqual(t, bench.MaxLive, wasmhost.MaxPoolSize)
}
