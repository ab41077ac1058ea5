package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/bench"
	"github.com/ptcx/ptcx/guest/python"
	"github.com/ptcx/ptcx/internal/testkit"
)

// tinyBench sizes a run for tests: one sample of each, a short loop.
var tinyBench = []string{"bench", "--runs", "1", "--calls", "10", "--iterations", "1000", "--live", "4", "--batch", "2", "--parallel", "1",
	"--serve-parallel", "2", "--parked", "2"}

// ptcx bench runs every workload on ptcx and goja and prints one JSON line
// per pair, every answer right; what it measures is the machine's business.
func TestBench_json(t *testing.T) {
	testkit.RequireGuest(t)
	out, errOut, status := ptcx(t, "", append(tinyBench, "--peers", "goja", "--json")...)
	require.Equal(t, exitOK, status, errOut)
	sc := bufio.NewScanner(strings.NewReader(out))
	var got []string
	for sc.Scan() {
		var r bench.Result
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&r), sc.Text())
		got = append(got, r.Impl+" "+r.Metric)
		if r.Impl == bench.ImplGoja && r.Unsupported() {
			continue // suspend, resume and the pool: goja cannot; nor Python
		}
		if w, err := bench.Lookup(r.Metric); err == nil && w.Language == api.LanguagePython && python.Wasm() == nil {
			require.True(t, r.Missing(), "%s on %s: %s", r.Metric, r.Impl, r.Note)
			continue // a build without the Python guest
		}
		w, err := bench.Lookup(r.Metric)
		require.NoError(t, err, r.Metric)
		want := bench.Params{Runs: 1}.Samples(w.Kind) // --runs 1: the bench's own rule per kind
		if w.Kind == bench.Parked {
			want = 2 // one per resume: --parked
		}
		require.Equal(t, want, r.N, "%s on %s: %s", r.Metric, r.Impl, r.Note)
		// A per-call figure is a difference of two times, and goja's live
		// memory a difference of two Pss readings small beside their noise
		// (CI read 0): either may be 0 or below at n = 1. ptcx's live
		// instances hold megabytes.
		if w.Kind != bench.PerCall && (w.Kind != bench.LiveMemory || r.Impl != bench.ImplGoja) {
			require.Positive(t, r.Med, "%s on %s", r.Metric, r.Impl)
		}
	}
	var want []string
	for _, w := range bench.Workloads {
		want = append(want, "ptcx "+w.Name, "goja "+w.Name)
	}
	require.Equal(t, want, got)
	require.Contains(t, errOut, "bench: trivial_e2e ptcx: median")
}

// The table names the machine and the ratios; --out writes the JSON lines,
// the table and a chart per workload; a peer that cannot run is reported
// missing, and fails the run only with --require-peers.
func TestBench_reportAndMissingPeer(t *testing.T) {
	testkit.RequireGuest(t)
	dir := t.TempDir()
	args := append(tinyBench, "--workloads", "trivial_e2e,compute_loop", "--peers", "goja,quickjs-wasi",
		"--modules", filepath.Join(dir, "nowhere"), "--out", dir)
	out, errOut, status := ptcx(t, "", args...)
	require.Equal(t, exitOK, status, errOut)
	require.Contains(t, out, bench.ThisMachine().CPU)
	require.Contains(t, out, "| workload | unit | ptcx | goja | quickjs-wasi | ptcx ÷ goja | ptcx ÷ quickjs-wasi |")
	require.Contains(t, out, "quickjs-wasi, `trivial_e2e`, `compute_loop`: missing: ", "one line per peer and reason")
	for _, name := range []string{"results.jsonl", "report.md", "trivial_e2e.svg", "compute_loop.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.NotEmpty(t, b, name)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	require.Equal(t, out, string(md))

	_, errOut, status = ptcx(t, "", append(args, "--require-peers")...)
	require.Equal(t, exitTool, status)
	require.Contains(t, errOut, "trivial_e2e on quickjs-wasi: missing: ")
}

// The Python peers are peers like the others: --peers names them, and
// python_1plus1 is measured on ptcx and on both, every answer right, the
// ratios in the table and the native CPython's version in its note.
func TestBench_pythonPeers(t *testing.T) {
	testkit.RequireGuest(t)
	testkit.RequirePython(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on PATH for cpython-native")
	}
	out, errOut, status := ptcx(t, "", append(tinyBench, "--workloads", "python_1plus1", "--peers", "python-wasm-fresh,cpython-native")...)
	require.Equal(t, exitOK, status, errOut)
	require.Contains(t, out, "| workload | unit | ptcx | python-wasm-fresh | cpython-native | ptcx ÷ python-wasm-fresh | ptcx ÷ cpython-native |")
	require.Contains(t, out, "Targets: ÷ python-wasm-fresh ≤ 0.0625: ")
	require.Regexp(t, "cpython-native, `python_1plus1`: CPython 3\\.[0-9]+\\.[0-9]+ \\(/", out)
	require.NotContains(t, out, "Not measured")
}

// Every size flag below, and past, its range is a usage error naming it.
func TestBench_flagBounds(t *testing.T) {
	for _, f := range bench.ParamList {
		for _, v := range []int{0, f.Max + 1} {
			t.Run(fmt.Sprintf("%s=%d", f.Name, v), func(t *testing.T) {
				out, errOut, status := ptcx(t, "", "bench", fmt.Sprintf("--%s=%d", f.Name, v))
				require.Equal(t, exitUsage, status)
				require.Empty(t, out)
				most := f.Max
				if f.Default == 0 { // --rounds: at most --runs (20)
					most = bench.DefaultRuns
				}
				require.Contains(t, errOut, fmt.Sprintf("--%s %d: want 1 to %d", f.Name, v, most))
			})
		}
	}
	for _, tt := range []struct{ args, contains string }{
		{"--peers v8", `--peers: no peer "v8": want goja, node-worker, quickjs-wasi, ptcx-twin, ptcx-in-process, http-floor, python-wasm-fresh, cpython-native, or none`},
		{"--workloads nope", `--workloads: no workload "nope": want one of trivial_e2e`},
		{"--timeout 0s", "--timeout 0s: want a positive duration"},
	} {
		_, errOut, status := ptcx(t, "", append([]string{"bench"}, strings.Fields(tt.args)...)...)
		require.Equal(t, exitUsage, status, tt.args)
		require.Contains(t, errOut, tt.contains)
	}
}

// The exit status: a failed result always fails the run, a missed target
// only with --check, a missing peer only with --require-peers.
func TestBenchStatus(t *testing.T) {
	w, err := bench.Lookup("trivial_e2e")
	require.NoError(t, err)
	ws := []bench.Workload{w}
	ok := bench.Result{Impl: bench.ImplPTCX, Metric: w.Name, Unit: "ms", N: 1, Min: 0.3, Med: 0.3, P90: 0.3}
	slow := bench.Result{Impl: bench.ImplPTCX, Metric: w.Name, Unit: "ms", N: 1, Min: 9, Med: 9, P90: 9}
	missing := bench.Result{Impl: bench.ImplGoja, Metric: w.Name, Unit: "ms", Note: "missing: not here"}
	unsupported := bench.Result{Impl: bench.ImplGoja, Metric: w.Name, Unit: "ms", Note: "missing: unsupported: no snapshots"}
	failed := bench.Result{Impl: bench.ImplGoja, Metric: w.Name, Unit: "ms", Note: "failed: wrong answer"}
	tests := []struct {
		name                string
		results             []bench.Result
		check, requirePeers bool
		want                int
		says                string
	}{
		{"target met", []bench.Result{ok}, true, false, exitOK, ""},
		{"target missed", []bench.Result{slow}, true, false, exitTool, "trivial_e2e: target missed: ≤ 0.3 ms: 9 ✗ MISSED"},
		{"target missed without --check", []bench.Result{slow}, false, false, exitOK, ""},
		{"peer missing", []bench.Result{ok, missing}, true, false, exitOK, ""},
		{"peer missing with --require-peers", []bench.Result{ok, missing}, false, true, exitTool, "trivial_e2e on goja: missing: not here"},
		{"peer unsupported with --require-peers", []bench.Result{ok, unsupported}, false, true, exitOK, ""},
		{"peer failed", []bench.Result{ok, failed}, false, false, exitTool, "trivial_e2e on goja: failed: wrong answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb strings.Builder
			got := benchStatus(&stdio{out: &out, err: &errb}, ws, tt.results, tt.check, tt.requirePeers)
			require.Equal(t, tt.want, got)
			if tt.says == "" {
				require.Empty(t, errb.String())
			} else {
				require.Contains(t, errb.String(), tt.says)
			}
		})
	}
}
