package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ptcx/ptcx/bench"
	"github.com/ptcx/ptcx/bench/gojapeer"
	"github.com/ptcx/ptcx/wasmhost"
)

var benchCommand = command{
	name:  "bench",
	brief: "measure ptcx beside goja, Node Workers, quickjs-wasi and CPython",
	summary: "Measure ptcx beside its peers in one run (bench/): goja in-process, a fresh Node\n" +
		"worker_threads Worker per run and quickjs-wasi on Node, the same programs on each,\n" +
		"and for the Python workloads the same python.wasm started fresh without an image\n" +
		"(python-wasm-fresh) and native CPython in a process per run (cpython-native),\n" +
		"every answer checked. Prints a Markdown table whose headline figures are ratios\n" +
		"ptcx ÷ peer (--json: the JSON lines) and every target's verdict (✓, ✗ MISSED or not\n" +
		"measured); --out DIR writes results.jsonl, report.md and an SVG chart per workload.\n" +
		"A peer that cannot run here, or cannot measure a workload (goja and node-worker\n" +
		"neither snapshot nor pool; a peer of one language runs none of the other's), is\n" +
		"reported missing with the reason.\n" +
		"Exit status: 0 ok, 1 a result failed, a target missed (--check) or a peer missing\n" +
		"(--require-peers; a workload it cannot measure does not count), 2 usage.\n\n" +
		benchWorkloads(),
	usage: "bench [--runs N] [--rounds N] [--calls N] [--iterations N] [--live N] [--parallel N] [--batch N]\n" +
		"      [--serve-parallel N] [--parked N]\n" +
		"      [--peers LIST] [--workloads LIST] [--node PATH] [--modules DIR] [--python PATH] [--qjs-native DIR]\n" +
		"      [--out DIR]\n" +
		"      [--timeout D] [--json] [--check] [--require-peers]",
	run: runBench,
}

// benchWorkloads lists the workloads (--workloads) and their targets, on
// ptcx's median or on the ratio ptcx ÷ peer, from bench.Workloads.
func benchWorkloads() string {
	var b strings.Builder
	b.WriteString("Workloads (--workloads) and their targets:")
	for _, w := range bench.Workloads {
		targets := make([]string, len(w.Targets))
		for i, t := range w.Targets {
			targets[i] = t.Describe(w)
		}
		fmt.Fprintf(&b, "\n  %-24s %s", w.Name, strings.Join(targets, "; "))
	}
	return b.String()
}

// benchPeers are the peers ptcx bench knows, in report order: ptcx on
// wasmtime first when this build has it.
var benchPeers = func() []string {
	peers := []string{bench.ImplGoja, bench.ImplNodeWorker, bench.ImplQuickJSWasi, bench.ImplPTCXTwin, bench.ImplPTCXInProcess,
		bench.ImplHTTPFloor, bench.ImplPythonWasmFresh, bench.ImplCPythonNative}
	if wasmhost.CheckEngine(wasmhost.EngineWasmtime) == nil {
		peers = append([]string{bench.ImplPTCXWasmtime}, peers...)
	}
	return peers
}()

func runBench(ctx context.Context, c command, s *stdio, args []string) int {
	fs := newFlags(c, s)
	var p bench.Params
	for _, f := range bench.ParamList {
		usage := f.Usage
		if f.Default != 0 { // a derived one (--rounds) says its bound itself
			usage += fmt.Sprintf(", 1 to %d", f.Max)
		}
		fs.IntVar(p.Field(f.Name), f.Name, f.Default, usage)
	}
	peers := fs.String("peers", strings.Join(benchPeers, ","), "the peers to measure beside ptcx (`LIST`, comma-separated; none for ptcx alone)")
	only := fs.String("workloads", "", "the workloads to run (`LIST`, comma-separated, of those above; empty: all)")
	node := fs.String("node", "node", "the Node executable (`PATH`)")
	modules := fs.String("modules", "bench/peers", "the directory whose node_modules holds quickjs-wasi (`DIR`; npm ci there)")
	python := fs.String("python", "python3", "the native CPython of cpython-native (`PATH`, or a name on PATH)")
	native := fs.String("qjs-native", "", "measure compute_loop on the native QuickJS-NG builds in `DIR` too (qjs-native-switch, qjs-native-goto: scripts/qjs-native.sh, which make bench runs)")
	out := fs.String("out", "", "write results.jsonl, report.md and the SVG charts to `DIR`")
	timeout := fs.Duration("timeout", 30*time.Minute, "bound on the whole run (`D`)")
	asJSON := fs.Bool("json", false, "print the JSON lines instead of the table")
	check := fs.Bool("check", false, "exit 1 when ptcx misses a target")
	requirePeers := fs.Bool("require-peers", false, "exit 1 when a peer is missing")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(fs, s, "unexpected argument %q", pos[0])
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, f := range bench.ParamList {
		if f.Default == 0 {
			continue // derived from the others (--rounds): checked below, against them
		}
		if err := f.Check(*p.Field(f.Name)); err != nil {
			return paramUsage(fs, s, err)
		}
	}
	if set["rounds"] && p.Rounds < 1 {
		return usageError(fs, s, "--rounds %d: want 1 to %d", p.Rounds, p.Runs) // --runs is in range: checked above
	}
	if _, err := p.Check(); err != nil {
		return paramUsage(fs, s, err)
	}
	if *timeout <= 0 {
		return usageError(fs, s, "--timeout %s: want a positive duration", *timeout)
	}
	workloads, err := pickWorkloads(*only)
	if err != nil {
		return usageError(fs, s, "--workloads: %v", err)
	}
	names, err := pickPeers(*peers)
	if err != nil {
		return usageError(fs, s, "--peers: %v", err)
	}
	if *native != "" {
		names = append(names, bench.ImplQJSNativeSwitch, bench.ImplQJSNativeGoto)
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	own, err := bench.NewPTCX(ctx, p)
	if err != nil {
		return fail(s, err)
	}
	defer own.Close(context.WithoutCancel(ctx))
	impls := []bench.Impl{own}
	for _, name := range names {
		switch name {
		case bench.ImplGoja:
			impls = append(impls, gojapeer.New())
			continue
		case bench.ImplPTCXInProcess:
			impls = append(impls, own.InProcess())
			continue
		case bench.ImplPTCXTwin:
			impls = append(impls, own.Twin())
			continue
		case bench.ImplHTTPFloor:
			impls = append(impls, bench.NewHTTPFloor())
			continue
		case bench.ImplQJSNativeSwitch, bench.ImplQJSNativeGoto:
			impls = append(impls, bench.NewQJSNative(name, *native))
			continue
		case bench.ImplPythonWasmFresh:
			peer, done := bench.NewPythonFresh(ctx)
			defer done()
			impls = append(impls, peer)
			continue
		case bench.ImplCPythonNative:
			impls = append(impls, bench.NewCPythonNative(ctx, *python))
			continue
		}
		if name == bench.ImplPTCXWasmtime {
			wt, err := bench.NewPTCXEngine(ctx, p, wasmhost.EngineWasmtime)
			if err != nil {
				return fail(s, fmt.Errorf("ptcx bench: %s: %w", name, err))
			}
			defer wt.Close(context.WithoutCancel(ctx))
			impls = append(impls, wt)
			continue
		}
		peer, done := bench.NewNode(name, bench.NodeConfig{Node: *node, Modules: *modules})
		defer done()
		impls = append(impls, peer)
	}
	results, err := bench.Run(ctx, impls, workloads, p, func(r bench.Result) {
		fmt.Fprintf(s.err, "bench: %s %s: %s\n", r.Metric, r.Impl, summary(r))
	})
	if err != nil {
		return fail(s, err)
	}
	report := bench.Report{Version: currentVersion(), Machine: bench.ThisMachine(), Params: p, When: time.Now(), Results: results}
	if *out != "" {
		if err := report.Write(*out, workloads); err != nil {
			return fail(s, err)
		}
	}
	if *asJSON {
		if err := bench.WriteJSONLines(s.out, results); err != nil {
			return fail(s, err)
		}
	} else {
		fmt.Fprint(s.out, report.Markdown(workloads))
	}
	return benchStatus(s, workloads, results, *check, *requirePeers)
}

// paramUsage is the usage error of a *bench.ParamError.
func paramUsage(fs *flag.FlagSet, s *stdio, err error) int {
	var pe *bench.ParamError
	if !errors.As(err, &pe) {
		return usageError(fs, s, "%v", err)
	}
	return usageError(fs, s, "--%s %d: want 1 to %d", pe.Param, pe.Value, pe.Max)
}

// summary is one result for the progress lines.
func summary(r bench.Result) string {
	if r.N == 0 {
		return r.Note
	}
	return fmt.Sprintf("median %.4g %s (n %d)", r.Med, r.Unit, r.N)
}

// benchStatus is the exit status: a failed result always fails the run;
// a missed target with check, a missing peer with requirePeers.
func benchStatus(s *stdio, workloads []bench.Workload, results []bench.Result, check, requirePeers bool) int {
	status := exitOK
	for _, r := range results {
		if r.Failed() || (requirePeers && r.Missing() && !r.Unsupported()) {
			fmt.Fprintf(s.err, "ptcx bench: %s on %s: %s\n", r.Metric, r.Impl, r.Note)
			status = exitTool
		}
	}
	if check {
		for _, v := range bench.Verdicts(workloads, results) {
			if v.Measured && !v.OK {
				fmt.Fprintf(s.err, "ptcx bench: %s: target missed: %s\n", v.Workload.Name, v)
				status = exitTool
			}
		}
	}
	return status
}

// pickWorkloads returns the workloads named in list, all when it is empty.
func pickWorkloads(list string) ([]bench.Workload, error) {
	if list == "" {
		return bench.Workloads, nil
	}
	var out []bench.Workload
	for name := range strings.SplitSeq(list, ",") {
		w, err := bench.Lookup(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// pickPeers returns the peers named in list ("none": no peer).
func pickPeers(list string) ([]string, error) {
	if list == "none" {
		return nil, nil
	}
	var out []string
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(benchPeers, name) {
			return nil, fmt.Errorf("no peer %q: want %s, or none", name, strings.Join(benchPeers, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}
