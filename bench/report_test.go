package bench_test

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/bench"
)

// fixed is an implementation that returns the same raw samples for every
// job, or err.
type fixed struct {
	name string
	raw  bench.Raw
	err  error
}

func (f fixed) Name() string { return f.name }
func (f fixed) Measure(context.Context, bench.Job) (bench.Raw, error) {
	return f.raw, f.err
}

func workload(t *testing.T, name string) bench.Workload {
	t.Helper()
	w, err := bench.Lookup(name)
	require.NoError(t, err)
	return w
}

// Run turns raw samples into the workload's unit (per call: the run minus
// the median run without calls, over the calls); an implementation that
// cannot run is missing, one that fails is failed, and both are kept.
func TestRun_summaries(t *testing.T) {
	impls := []bench.Impl{
		fixed{name: "a", raw: bench.Raw{Samples: []float64{3e6, 1e6, 2e6}, Base: []float64{0.5e6, 1e6, 0}}},
		bench.Missing("b", "no such thing here"),
		fixed{name: "c", err: errors.New("wrong answer: got 1, want 2")},
		fixed{name: "d"},
	}
	var seen []bench.Result
	results, err := bench.Run(context.Background(), impls,
		[]bench.Workload{workload(t, "trivial_e2e"), workload(t, "per_call_await")},
		bench.Params{Calls: 1000, Rounds: 1}, func(r bench.Result) { seen = append(seen, r) })
	require.NoError(t, err)
	require.Equal(t, results, seen)
	require.Equal(t, []bench.Result{
		{Impl: "a", Metric: "trivial_e2e", Unit: "ms", N: 3, Min: 1, Med: 2, P90: 3},
		{Impl: "b", Metric: "trivial_e2e", Unit: "ms", Note: "missing: no such thing here"},
		{Impl: "c", Metric: "trivial_e2e", Unit: "ms", Note: "failed: wrong answer: got 1, want 2"},
		{Impl: "d", Metric: "trivial_e2e", Unit: "ms", Note: "failed: no samples"},
		{Impl: "a", Metric: "per_call_await", Unit: "µs", N: 3, Min: 0.5, Med: 1.5, P90: 2.5},
		{Impl: "b", Metric: "per_call_await", Unit: "µs", Note: "missing: no such thing here"},
		{Impl: "c", Metric: "per_call_await", Unit: "µs", Note: "failed: wrong answer: got 1, want 2"},
		{Impl: "d", Metric: "per_call_await", Unit: "µs", Note: "failed: no samples"},
	}, results)
	require.True(t, results[1].Missing())
	require.False(t, results[1].Failed())
	require.True(t, results[2].Failed())

	_, err = bench.Run(context.Background(), impls, bench.Workloads, bench.Params{Runs: bench.MaxRuns + 1}, nil)
	require.ErrorContains(t, err, "bench: runs 1001: want 1 to 1000")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = bench.Run(ctx, impls, bench.Workloads, bench.Params{}, nil)
	require.ErrorIs(t, err, context.Canceled)
}

// report is a run of two workloads with one peer measured and one missing.
func report() bench.Report {
	return bench.Report{
		Version: "v1.2.3",
		Machine: bench.Machine{CPU: "Test CPU", Cores: 2, OS: "TestOS", Go: "go1.26"},
		Params:  bench.DefaultParams(),
		When:    time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		Results: []bench.Result{
			{Impl: "ptcx", Metric: "trivial_e2e", Unit: "ms", N: 20, Min: 1, Med: 2, P90: 3},
			{Impl: "node-worker", Metric: "trivial_e2e", Unit: "ms", N: 20, Min: 30, Med: 40, P90: 50},
			{Impl: "quickjs-wasi", Metric: "trivial_e2e", Unit: "ms", Note: "missing: no Node"},
			{Impl: "ptcx", Metric: "runs_per_second", Unit: "runs/s", N: 2, Min: 400, Med: 500, P90: 600, Note: "a note"},
			{Impl: "node-worker", Metric: "runs_per_second", Unit: "runs/s", N: 2, Min: 20, Med: 25, P90: 30},
			{Impl: "quickjs-wasi", Metric: "runs_per_second", Unit: "runs/s", Note: "missing: no Node"},
		},
	}
}

// A target is checked on ptcx's median or on the ratio to the peer it
// names, in the direction of the metric (a Floor's: the test below); at its
// limit it is met; a missing peer or workload is not measured.
func TestVerdicts(t *testing.T) {
	ws := []bench.Workload{workload(t, "trivial_e2e"), workload(t, "runs_per_second"), workload(t, "compute_loop"),
		workload(t, "suspend"), workload(t, "resume"), workload(t, "rss_per_pooled_instance"), workload(t, "trivial_e2e_new")}
	results := append(report().Results, []bench.Result{
		{Impl: "ptcx", Metric: "compute_loop", Unit: "ms", N: 20, Min: 80, Med: 90, P90: 100},
		{Impl: "ptcx-wasmtime", Metric: "compute_loop", Unit: "ms", N: 20, Min: 20, Med: 30, P90: 40},
		{Impl: "ptcx", Metric: "suspend", Unit: "ms", N: 20, Min: 0.5, Med: 1, P90: 2},
		{Impl: "ptcx", Metric: "resume", Unit: "ms", N: 20, Min: 1, Med: 1.5, P90: 2},
		{Impl: "goja", Metric: "resume", Unit: "ms", Note: "missing: goja cannot capture a run to bytes"},
		{Impl: "ptcx", Metric: "rss_per_pooled_instance", Unit: "MiB", N: 2, Min: 0.2, Med: 0.25, P90: 0.3},
	}...)
	var got []string
	for _, v := range bench.Verdicts(ws, results) {
		got = append(got, v.Workload.Name+" "+v.String())
	}
	require.Equal(t, []string{
		"trivial_e2e ≤ 0.3 ms: 2 ✗ MISSED",
		"trivial_e2e ÷ node-worker ≤ 0.01: 0.05 ✗ MISSED",
		"trivial_e2e ÷ quickjs-wasi ≤ 0.333: not measured",
		"runs_per_second ≥ 5000 runs/s: 500 ✗ MISSED",
		"runs_per_second ÷ quickjs-wasi ≥ 1: not measured",
		"compute_loop ÷ quickjs-wasi ≤ 1: not measured",
		"compute_loop ptcx-wasmtime ÷ qjs-native-switch ≤ 1.1: not measured",
		"compute_loop ÷ qjs-native-switch ≤ 1.6: not measured",
		"suspend ≤ 1 ms: 1 ✓",
		"resume ≤ 1 ms: 1.5 ✗ MISSED",
		"rss_per_pooled_instance ≤ 0.3 MiB: 0.25 ✓",
		"trivial_e2e_new ≤ 0.8 ms: not measured",
		"trivial_e2e_new ÷ quickjs-wasi ≤ 1: not measured",
	}, got)
}

// A floor on a cost (Target.Floor) is met at and above its limit and
// missed below it; a ceiling the other way round.
func TestVerdicts_floorAndCeiling(t *testing.T) {
	loop := workload(t, "compute_loop")
	loop.Targets = []bench.Target{{Against: "b", Limit: 3, Floor: true}, {Against: "b", Limit: 3}}
	for _, tt := range []struct {
		ptcx           float64
		floor, ceiling bool
	}{{2.9, false, true}, {3, true, true}, {3.1, true, false}} {
		results := []bench.Result{
			{Impl: bench.ImplPTCX, Metric: loop.Name, N: 1, Med: tt.ptcx},
			{Impl: "b", Metric: loop.Name, N: 1, Med: 1},
		}
		vs := bench.Verdicts([]bench.Workload{loop}, results)
		require.Len(t, vs, 2)
		require.Equal(t, []bool{true, true}, []bool{vs[0].Measured, vs[1].Measured})
		require.Equal(t, tt.floor, vs[0].OK, "floor at %v", tt.ptcx)
		require.Equal(t, tt.ceiling, vs[1].OK, "ceiling at %v", tt.ptcx)
	}
}

// The targets of #12 and #13 are declared, each once, on the workloads
// they bound.
func TestWorkloads_targets(t *testing.T) {
	want := map[string][]bench.Target{
		"trivial_e2e":             {{Limit: 0.3}, {Against: bench.ImplNodeWorker, Limit: 0.01}, {Against: bench.ImplQuickJSWasi, Limit: 1.0 / 3}},
		"trivial_e2e_new":         {{Limit: 0.8}, {Against: bench.ImplQuickJSWasi, Limit: 1}},
		"rss_per_pooled_instance": {{Limit: 0.3}},
		"runs_per_second":         {{Limit: 5000}, {Against: bench.ImplQuickJSWasi, Limit: 1}},
		"compute_loop": {{Against: bench.ImplQuickJSWasi, Limit: 1},
			{Subject: bench.ImplPTCXWasmtime, Against: bench.ImplQJSNativeSwitch, Limit: 1.1}, {Against: bench.ImplQJSNativeSwitch, Limit: 1.6}},
		"session_feeds":     {{Limit: 0.4}, {Against: bench.ImplGoja, Limit: 3}},
		"after_session":     {{Of: "trivial_e2e", Limit: 1.2}},
		"serve_e2e":         {{Against: bench.ImplPTCXTwin, Plus: true, Limit: 0.15}},
		"serve_rps":         {{Against: bench.ImplPTCXInProcess, Limit: 0.8}},
		"serve_client_tool": {{Against: bench.ImplPTCXTwin, Limit: 2}},
		"parked_10k":        {{Field: "rss_mib", Limit: 1024}, {Field: "resume_p99_ms", Limit: 5}},
		"parked_10k_dir":    {{Field: "rss_mib", Limit: 1024}, {Field: "resume_p99_ms", Limit: 5}},
		"suspend":           {{Limit: 1}},
		"resume":            {{Limit: 1}},
	}
	for name, targets := range want {
		require.Equal(t, targets, workload(t, name).Targets, name)
	}
	require.Equal(t, "ms", workload(t, "suspend").Unit)
	require.Equal(t, "MiB", workload(t, "rss_per_pooled_instance").Unit)
}

// A target against another workload of ptcx's (Of: a ratio, or with Plus a
// difference), on a figure of Extra (Field), or on a peer's median
// (Subject) reads the right figures, and is not measured when one is
// missing.
func TestVerdicts_ofFieldSubject(t *testing.T) {
	ms := func(impl, metric string, med float64) bench.Result {
		return bench.Result{Impl: impl, Metric: metric, Unit: "ms", N: 5, Min: med, Med: med, P90: med}
	}
	results := []bench.Result{
		ms(bench.ImplPTCX, "trivial_e2e", 0.1),
		ms(bench.ImplPTCX, "serve_e2e", 0.2),
		ms(bench.ImplPTCXTwin, "serve_e2e", 0.12),
		ms(bench.ImplPTCXTwin, "serve_client_tool", 0.2),
		ms(bench.ImplPTCX, "after_session", 0.13),
		ms(bench.ImplPTCX, "serve_client_tool", 0.5),
		ms(bench.ImplPTCX, "compute_loop", 300),
		ms(bench.ImplPTCXWasmtime, "compute_loop", 210),
		ms(bench.ImplQJSNativeSwitch, "compute_loop", 200),
	}
	parked := ms(bench.ImplPTCX, "parked_10k", 1)
	parked.Extra = map[string]float64{"rss_mib": 2000, "resume_p99_ms": 4}
	results = append(results, parked)
	got := map[string]string{}
	ofPlus := workload(t, "serve_e2e")
	ofPlus.Name, ofPlus.Targets = "serve_e2e_of", []bench.Target{{Of: "trivial_e2e", Plus: true, Limit: 0.15}}
	results = append(results, ms(bench.ImplPTCX, "serve_e2e_of", 0.2))
	ws := []bench.Workload{workload(t, "after_session"), workload(t, "serve_e2e"), workload(t, "serve_client_tool"),
		workload(t, "compute_loop"), workload(t, "parked_10k"), workload(t, "parked_10k_dir"), ofPlus}
	for _, v := range bench.Verdicts(ws, results) {
		got[v.Workload.Name] += v.String() + "; "
	}
	require.Equal(t, "÷ ptcx's trivial_e2e ≤ 1.2: 1.3 ✗ MISSED; ", got["after_session"])
	require.Equal(t, "− ptcx-twin ≤ 0.15 ms: 0.08 ✓; ", got["serve_e2e"])
	require.Equal(t, "÷ ptcx-twin ≤ 2: 2.5 ✗ MISSED; ", got["serve_client_tool"])
	require.Equal(t, "− ptcx's trivial_e2e ≤ 0.15 ms: 0.1 ✓; ", got["serve_e2e_of"])
	require.Equal(t, "÷ quickjs-wasi ≤ 1: not measured; "+
		"ptcx-wasmtime ÷ qjs-native-switch ≤ 1.1: 1.05 ✓; ÷ qjs-native-switch ≤ 1.6: 1.5 ✓; ", got["compute_loop"])
	require.Equal(t, "rss_mib ≤ 1024: 2000 ✗ MISSED; resume_p99_ms ≤ 5: 4 ✓; ", got["parked_10k"])
	require.Equal(t, "rss_mib ≤ 1024: not measured; resume_p99_ms ≤ 5: not measured; ", got["parked_10k_dir"])
	// Without trivial_e2e in the run, the targets on it are not measured.
	for _, v := range bench.Verdicts([]bench.Workload{ws[0], ofPlus}, results[1:]) {
		require.False(t, v.Measured, v.String())
	}
}

// The table has a column per implementation and a ratio per peer, names
// the machine, and says why a result is missing.
func TestReport_Markdown(t *testing.T) {
	ws := []bench.Workload{workload(t, "trivial_e2e"), workload(t, "runs_per_second")}
	md := report().Markdown(ws)
	for _, want := range []string{
		"Measured by `ptcx bench` (ptcx v1.2.3) on Test CPU, 2 cores, TestOS, go1.26, 2026-12-01, in one run: medians of 20 samples each (100 for per_call_await and python_per_call_await, 100 for serve_e2e and serve_client_tool, 2 for",
		"| workload | unit | ptcx | node-worker | quickjs-wasi | ptcx ÷ node-worker | ptcx ÷ quickjs-wasi |",
		"| `trivial_e2e` | ms | 2 | 40 | — | **0.05** | — |",
		"| `runs_per_second` | runs/s | 500 | 25 | — | **20** | — |",
		"- `runs_per_second`: trivial runs per second, 2 at a time through one executor. Targets: ≥ 5000 runs/s: 500 ✗ MISSED; ÷ quickjs-wasi ≥ 1: not measured.",
		"Notes:\n\n- ptcx, `runs_per_second`: a note\n",
		"Not measured:\n\n- quickjs-wasi, `trivial_e2e`, `runs_per_second`: missing: no Node\n",
	} {
		require.Contains(t, md, want)
	}
}

// Each chart is well-formed SVG with a bar per measured implementation and
// the ratio to ptcx beside each peer's.
func TestReport_SVG(t *testing.T) {
	svg := report().SVG(workload(t, "trivial_e2e"))
	dec := xml.NewDecoder(strings.NewReader(svg))
	rects := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, svg)
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			rects++
		}
	}
	require.Equal(t, 3, rects, "the background and two bars")
	require.Contains(t, svg, "40 ms (ptcx ÷ it: 0.05)")
	require.Contains(t, svg, "not measured")
	require.Contains(t, svg, "lower is better")
	require.Contains(t, report().SVG(workload(t, "runs_per_second")), "higher is better")
}

// Write puts the JSON lines, the table and a chart per workload in a
// directory.
func TestReport_Write(t *testing.T) {
	dir := t.TempDir()
	ws := []bench.Workload{workload(t, "trivial_e2e"), workload(t, "runs_per_second")}
	require.NoError(t, report().Write(dir, ws))
	var lines strings.Builder
	require.NoError(t, bench.WriteJSONLines(&lines, report().Results))
	for name, want := range map[string]string{
		"results.jsonl": lines.String(), "report.md": report().Markdown(ws),
		"trivial_e2e.svg": report().SVG(ws[0]), "runs_per_second.svg": report().SVG(ws[1]),
	} {
		got, err := readFile(dir, name)
		require.NoError(t, err)
		require.Equal(t, want, got, name)
	}
	require.Contains(t, lines.String(), `{"impl":"quickjs-wasi","metric":"trivial_e2e","unit":"ms","n":0,"min":0,"med":0,"p90":0,"note":"missing: no Node"}`)
}

func readFile(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	return string(b), err
}

// Without Node the Node peers are missing and say what to do; an unknown
// peer is missing too, naming the ones there are.
func TestNewNode_missing(t *testing.T) {
	for _, name := range []string{bench.ImplNodeWorker, bench.ImplQuickJSWasi} {
		peer, done := bench.NewNode(name, bench.NodeConfig{Node: "/nonexistent/node"})
		_, err := peer.Measure(context.Background(), bench.Job{})
		done()
		require.Equal(t, name, peer.Name())
		require.ErrorIs(t, err, bench.ErrMissing)
		require.ErrorContains(t, err, "install it (apt-get install nodejs npm; make bench does)")
	}
	peer, done := bench.NewNode("deno", bench.NodeConfig{})
	defer done()
	_, err := peer.Measure(context.Background(), bench.Job{})
	require.ErrorContains(t, err, `no Node peer "deno": want node-worker or quickjs-wasi`)
}

// serve_rps's ceiling is 1 ÷ (1/ptcx-in-process + 1/http-floor), shown
// beside ptcx's median; without a peer's (or ptcx's) median it is not
// measured, and a workload without a Ceiling shows none.
func TestReport_ceiling(t *testing.T) {
	rps := func(impl string, med float64) bench.Result {
		return bench.Result{Impl: impl, Metric: "serve_rps", Unit: "runs/s", N: 2, Min: med, Med: med, P90: med}
	}
	w := workload(t, "serve_rps")
	require.Equal(t, []string{bench.ImplPTCXInProcess, bench.ImplHTTPFloor}, w.Ceiling)
	md := func(results ...bench.Result) string {
		return bench.Report{Machine: bench.Machine{CPU: "Test CPU", Cores: 2}, Results: results}.Markdown([]bench.Workload{w})
	}
	// 1 ÷ (1/20000 + 1/20000) = 10000; 8000 ÷ 10000 = 0.8.
	require.Contains(t, md(rps(bench.ImplPTCX, 8000), rps(bench.ImplPTCXInProcess, 20000), rps(bench.ImplHTTPFloor, 20000)),
		"Ceiling (no verdict): 1 ÷ (1/ptcx-in-process + 1/http-floor), 10000 runs/s: ptcx ÷ it 0.8.")
	require.Contains(t, md(rps(bench.ImplPTCX, 8000), rps(bench.ImplPTCXInProcess, 20000)),
		"Ceiling (no verdict): 1 ÷ (1/ptcx-in-process + 1/http-floor): not measured.")
	require.Contains(t, md(rps(bench.ImplPTCXInProcess, 20000), rps(bench.ImplHTTPFloor, 20000)),
		"Ceiling (no verdict): 1 ÷ (1/ptcx-in-process + 1/http-floor): not measured.")
	other := bench.Report{Machine: bench.Machine{CPU: "Test CPU", Cores: 2}}.Markdown([]bench.Workload{workload(t, "trivial_e2e")})
	require.NotContains(t, other, "Ceiling")
}
