package bench_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/bench"
	"github.com/ptcx/ptcx/bench/gojapeer"
	"github.com/ptcx/ptcx/internal/testkit"
)

// pyRunner is a fake implementation that runs the languages it is told
// (bench.LanguageRunner) and records the jobs it is given.
type pyRunner struct {
	fakeImpl
	runs func(api.Language) error
}

func (p *pyRunner) RunsLanguage(l api.Language) error { return p.runs(l) }

// A Python workload is not given to an implementation that runs only
// TypeScript (one that is no LanguageRunner): it is missing, unsupported,
// saying why; a LanguageRunner's own reason is kept, missing when it says
// ErrMissing (it could run it, not here), unsupported otherwise. A Python
// job carries its language and Python programs, with no TS or JS.
func TestRun_language(t *testing.T) {
	var log []string
	ts := &fakeImpl{name: "ts-only", log: &log, measure: constant(1e6)}
	py := &pyRunner{fakeImpl: fakeImpl{name: "py", log: &log, measure: constant(2e6)},
		runs: func(l api.Language) error {
			if l != api.LanguagePython {
				return fmt.Errorf("py runs Python only")
			}
			return nil
		}}
	notHere := &pyRunner{fakeImpl: fakeImpl{name: "not-here", log: &log, measure: constant(3e6)},
		runs: func(api.Language) error { return fmt.Errorf("%w: no Python guest in this build", bench.ErrMissing) }}
	ws := []bench.Workload{workload(t, "trivial_e2e"), workload(t, "python_1plus1")}
	results, err := bench.Run(context.Background(), []bench.Impl{ts, py, notHere}, ws, bench.Params{Runs: 2, Rounds: 1}, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"ts-only", "py"}, log, "each measures only the workload of its language")

	byName := map[string]bench.Result{}
	for _, r := range results {
		byName[r.Impl+" "+r.Metric] = r
	}
	require.Equal(t, 2, byName["ts-only trivial_e2e"].N)
	r := byName["ts-only python_1plus1"]
	require.True(t, r.Unsupported(), "%+v", r)
	require.Equal(t, "missing: unsupported: ts-only runs TypeScript (JavaScript) programs only, not Python", r.Note)
	r = byName["py trivial_e2e"]
	require.True(t, r.Unsupported(), "%+v", r)
	require.Equal(t, "missing: unsupported: py runs Python only", r.Note)
	require.Equal(t, 2, byName["py python_1plus1"].N)
	for _, m := range []string{"trivial_e2e", "python_1plus1"} {
		r = byName["not-here "+m]
		require.True(t, r.Missing(), "%+v", r)
		require.False(t, r.Unsupported(), "%+v", r)
		require.Equal(t, "missing: no Python guest in this build", r.Note)
	}

	j := py.jobs[0]
	require.Equal(t, api.LanguagePython, j.Language)
	require.Equal(t, "1 + 1", j.Programs[0].Python)
	require.Empty(t, j.Programs[0].TS+j.Programs[0].JS)
	require.Equal(t, "2", j.Programs[0].Answer)
}

// A Python session's feeds are Python: ptcx's "Code\nResult", and the
// block alone for a peer that re-runs them.
func TestExpand_pythonFeeds(t *testing.T) {
	j, err := workload(t, "python_session_feeds").Expand(bench.Params{Runs: 1})
	require.NoError(t, err)
	require.Len(t, j.Feeds, 10)
	f := j.Feeds[1]
	require.Equal(t, "def line_total(o):\n    return o['qty'] * o['price']\nline_total(orders[0])", f.Python)
	require.Equal(t, "def line_total(o):\n    return o['qty'] * o['price']", f.Block)
	require.Equal(t, "7.0", f.Answer)
	require.Empty(t, f.TS+f.JS)
	require.Equal(t, `"3 orders, total 21.6, biggest B2"`, j.Feeds[9].Answer)
}

// pythonPeers are the Python peers, python-wasm-fresh closed by the
// function returned. Without python3 on PATH cpython-native is missing.
func pythonPeers(t *testing.T) ([]bench.Impl, func()) {
	t.Helper()
	fresh, done := bench.NewPythonFresh(context.Background())
	return []bench.Impl{fresh, bench.NewCPythonNative(context.Background(), "")}, done
}

// The Python workloads run on ptcx and on both Python peers in one run,
// every answer right (the peers' checked as the guest's JSON, and as
// CPython prints it); the peers measure latency and sessions only (a
// re-run of the feeds so far per feed), and goja runs no Python.
func TestRun_python(t *testing.T) {
	testkit.RequireGuest(t)
	testkit.RequirePython(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p := bench.Params{Runs: 1, Calls: 20}
	own, err := bench.NewPTCX(ctx, p)
	require.NoError(t, err)
	defer own.Close(ctx)
	peers, done := pythonPeers(t)
	defer done()
	_, noPython := exec.LookPath("python3")
	ws := []bench.Workload{workload(t, "per_call_await"), workload(t, "python_1plus1"), workload(t, "python_session_feeds"),
		workload(t, "python_per_call_await")}
	impls := append([]bench.Impl{own, gojapeer.New(), own.Twin()}, peers...)
	results, err := bench.Run(ctx, impls, ws, p, nil)
	require.NoError(t, err)
	require.Len(t, results, len(ws)*len(impls))
	for _, r := range results {
		t.Logf("%+v", r)
		switch {
		case r.Impl == bench.ImplCPythonNative && noPython != nil:
			require.True(t, r.Missing(), "%+v", r)
		case r.Impl == bench.ImplPTCXTwin && r.Metric != "python_per_call_await":
			require.True(t, r.Unsupported(), "%+v", r)
			require.Contains(t, r.Note, "has none")
		case r.Impl == bench.ImplGoja && r.Metric != "per_call_await":
			require.True(t, r.Unsupported(), "%+v", r)
			require.Contains(t, r.Note, "goja runs TypeScript (JavaScript) programs only, not Python")
		case r.Metric == "per_call_await" && (r.Impl == bench.ImplPythonWasmFresh || r.Impl == bench.ImplCPythonNative):
			require.True(t, r.Unsupported(), "%+v", r)
			require.Contains(t, r.Note, "runs Python programs only")
		case r.Metric == "python_per_call_await" && r.Impl != bench.ImplPTCX && r.Impl != bench.ImplPTCXTwin:
			require.True(t, r.Unsupported(), "%+v", r)
			require.Contains(t, r.Note, "starts every run afresh: it measures Python's latency and session workloads only")
		default:
			require.Positive(t, r.N, "%s on %s: %s", r.Metric, r.Impl, r.Note)
		}
	}
	for _, v := range bench.Verdicts(ws, results) {
		if v.Workload.Name != "per_call_await" {
			require.True(t, v.Measured, "%s: %s", v.Workload.Name, v)
		}
	}
}

// A wrong answer fails ptcx and the Python peers, saying so: their
// answers are checked, not only timed (the feeds' too, in ptcx's session
// and in each re-run of the peers).
func TestRun_python_wrongAnswer(t *testing.T) {
	testkit.RequireGuest(t)
	testkit.RequirePython(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on PATH for cpython-native")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	own, err := bench.NewPTCX(ctx, bench.Params{Runs: 1})
	require.NoError(t, err)
	defer own.Close(ctx)
	peers, done := pythonPeers(t)
	defer done()
	peers = append([]bench.Impl{own}, peers...)
	one := workload(t, "python_1plus1")
	one.Answer = func(bench.Params, int) string { return "3" }
	feeds := workload(t, "python_session_feeds")
	feeds.Feeds = append([]bench.Feed(nil), feeds.Feeds[:4]...)
	feeds.Feeds[3].Answer = "25.0" // grand is 24.0
	results, err := bench.Run(ctx, peers, []bench.Workload{one, feeds}, bench.Params{Runs: 1}, nil)
	require.NoError(t, err)
	require.Len(t, results, 6)
	want := map[string]string{
		bench.ImplPTCX + " python_1plus1":                   "wrong answer: got 2, want 3",
		bench.ImplPTCX + " python_session_feeds":            "wrong answer: got 24.0, want 25.0",
		bench.ImplPythonWasmFresh + " python_1plus1":        "wrong answer: got 2, want 3",
		bench.ImplCPythonNative + " python_1plus1":          `wrong answer: cpython-native printed "2", want "3"`,
		bench.ImplPythonWasmFresh + " python_session_feeds": "wrong answer: got 24.0, want 25.0",
		bench.ImplCPythonNative + " python_session_feeds":   `wrong answer: cpython-native printed "24.0", want "25.0"`,
	}
	for _, r := range results {
		require.True(t, r.Failed(), "%+v", r)
		require.Contains(t, r.Note, want[r.Impl+" "+r.Metric])
	}
}

// A python3 that is not there leaves cpython-native missing, saying so.
func TestNewCPythonNative_missing(t *testing.T) {
	peer := bench.NewCPythonNative(context.Background(), "/nonexistent/python3")
	_, err := peer.Measure(context.Background(), bench.Job{})
	require.ErrorIs(t, err, bench.ErrMissing)
	require.True(t, strings.Contains(err.Error(), "no /nonexistent/python3"), err.Error())
}

// The Python workloads' targets: python_1plus1 against the fresh
// python.wasm and in ms, python_per_call_await against ptcx's own
// TypeScript per_call_await measured in its rounds (ptcx-twin); their
// anchors are ratios with no verdict.
func TestReport_pythonTargetsAndAnchors(t *testing.T) {
	ws := []bench.Workload{workload(t, "per_call_await"), workload(t, "python_1plus1"), workload(t, "python_session_feeds"),
		workload(t, "python_per_call_await")}
	rep := report()
	rep.Results = []bench.Result{
		{Impl: "ptcx", Metric: "per_call_await", Unit: "µs", N: 5, Min: 5, Med: 5, P90: 5},
		{Impl: "ptcx", Metric: "python_1plus1", Unit: "ms", N: 5, Min: 0.5, Med: 0.5, P90: 0.5},
		{Impl: bench.ImplPythonWasmFresh, Metric: "python_1plus1", Unit: "ms", N: 5, Min: 500, Med: 500, P90: 500},
		{Impl: bench.ImplCPythonNative, Metric: "python_1plus1", Unit: "ms", N: 5, Min: 20, Med: 20, P90: 20},
		{Impl: "ptcx", Metric: "python_session_feeds", Unit: "ms", Note: "failed: no sessions"},
		{Impl: bench.ImplCPythonNative, Metric: "python_session_feeds", Unit: "ms", N: 5, Min: 200, Med: 200, P90: 200},
		{Impl: "ptcx", Metric: "python_per_call_await", Unit: "µs", N: 5, Min: 12, Med: 12, P90: 12},
		{Impl: bench.ImplPTCXTwin, Metric: "python_per_call_await", Unit: "µs", N: 5, Min: 5, Med: 5, P90: 5},
		{Impl: bench.ImplCPythonNative, Metric: "per_call_await", Unit: "µs", Note: "missing: unsupported: Python only"},
		{Impl: bench.ImplCPythonNative, Metric: "python_per_call_await", Unit: "µs", Note: "missing: unsupported: Python only"},
	}
	var got []string
	for _, v := range bench.Verdicts(ws[1:], rep.Results) {
		got = append(got, v.Workload.Name+" "+v.String())
	}
	require.Equal(t, []string{
		"python_1plus1 ÷ python-wasm-fresh ≤ 0.0625: 0.001 ✓",
		"python_1plus1 ≤ 1 ms: 0.5 ✓",
		"python_session_feeds ≤ 2 ms: not measured",
		"python_per_call_await ÷ ptcx-twin ≤ 2: 2.4 ✗ MISSED",
	}, got)
	md := rep.Markdown(ws)
	for _, want := range []string{
		"| `python_1plus1` | ms | 0.5 | 500 | 20 | — | **0.001** | **0.025** | — |",
		"Anchors (no verdict): ÷ CPython-WASI on wasmtime, cold, as Monty publishes it, 16 ms: 0.0312.",
		"Anchors (no verdict): ÷ Monty's published ten feeds (a subset interpreter, M3 Max), 0.4 ms: not measured.",
		"- cpython-native, `per_call_await`, `python_per_call_await`: missing: unsupported: Python only\n",
		"- ptcx, `python_session_feeds`: failed: no sessions\n",
	} {
		require.Contains(t, md, want)
	}
}
