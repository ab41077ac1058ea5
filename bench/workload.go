package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is how a workload is measured; every implementation measures a kind
// the same way.
type Kind string

const (
	// Latency times each run of the program, end to end (raw samples in ns).
	Latency Kind = "latency"
	// PerCall times the program with Params.Calls awaited calls and with
	// none; a sample is (t(N) − median t(0)) / N (raw samples in ns).
	PerCall Kind = "per_call"
	// LiveMemory keeps Params.Live runs parked on the wait tool at once and
	// takes the growth of the process's resident memory per run (raw
	// samples in bytes).
	LiveMemory Kind = "live_memory"
	// Throughput runs Params.Runs runs, Params.Parallel at a time, through
	// one implementation (raw samples in runs per second).
	Throughput Kind = "throughput"
)

// Workload is one measurement, declared as data. Program is a run_code
// body in TypeScript (peers run it with its types stripped, as JavaScript);
// "{{i}}" in it is replaced by the run's index (a new program every run),
// "{{calls}}" by Params.Calls (0 for PerCall's baseline) and
// "{{iterations}}" by Params.Iterations. Answer returns the JSON of the
// value the program must return.
type Workload struct {
	Name    string
	What    string
	Kind    Kind
	Unit    string  // ms, µs, MB or runs/s
	Scale   float64 // raw sample ÷ Scale = the value in Unit
	Program string
	Tools   []string // of echo ({i} → {i}), sleep20 (true after 20 ms), wait (true when released)
	Answer  func(p Params, i int) string
	// HigherIsBetter is true for rates (runs/s); every other metric is a
	// cost, lower is better.
	HigherIsBetter bool
	Targets        []Target
}

// Target is a bound the project sets on ptcx's median: Limit in the
// workload's unit when Against is empty, else Limit on the ratio ptcx ÷
// Against's median from the same run. For a cost, ptcx must be at most
// Limit; for a rate, at least Limit.
type Target struct {
	Against string
	Limit   float64
}

// The implementations' names, as they appear in results.
const (
	ImplPTCX        = "ptcx"
	ImplGoja        = "goja"
	ImplNodeWorker  = "node-worker"
	ImplQuickJSWasi = "quickjs-wasi"
)

// ImplPTCXWasmtime is ptcx on the wasmtime engine (a build with the
// wasmtime tag), measured as a peer of ptcx on wazero.
const ImplPTCXWasmtime = "ptcx-wasmtime"

// Workloads are the measurements, in report order. suspend and resume (a
// run parked to a snapshot and brought back) join this list when the
// snapshot issue lands: a Kind each, measured by every implementation that
// can snapshot and reported missing by the others.
var Workloads = []Workload{
	{
		Name: "trivial_e2e", What: "a run_code call of a program seen before, end to end", Kind: Latency,
		Unit: "ms", Scale: 1e6, Program: `return "hello"`,
		Answer:  func(Params, int) string { return `"hello"` },
		Targets: []Target{{Limit: 3}, {Against: ImplNodeWorker, Limit: 0.01}, {Against: ImplQuickJSWasi, Limit: 1}},
	},
	{
		Name: "trivial_e2e_new", What: "the same with a new TypeScript program each run", Kind: Latency,
		Unit: "ms", Scale: 1e6, Program: `const n: number = {{i}}; return "hello " + n`,
		Answer:  func(_ Params, i int) string { return strconv.Quote("hello " + strconv.Itoa(i)) },
		Targets: []Target{{Against: ImplQuickJSWasi, Limit: 1}},
	},
	{
		Name: "per_call_await", What: "one awaited nested call of an echo tool: (t(N) − t(0)) / N", Kind: PerCall,
		Unit: "µs", Scale: 1e3, Tools: []string{"echo"},
		Program: `let s = 0; for (let i = 0; i < {{calls}}; i++) { s += (await tools.echo({i})).i } return s`,
		Answer: func(p Params, _ int) string {
			return strconv.Itoa(p.Calls * (p.Calls - 1) / 2)
		},
		Targets: []Target{{Limit: 10}, {Against: ImplGoja, Limit: 1}, {Against: ImplQuickJSWasi, Limit: 1}},
	},
	{
		Name: "fanout100x20ms_e2e", What: "Promise.all of 100 calls to a 20 ms tool, end to end", Kind: Latency,
		Unit: "ms", Scale: 1e6, Tools: []string{"sleep20"},
		Program: `return (await Promise.all(Array.from({length: 100}, () => tools.sleep20()))).length`,
		Answer:  func(Params, int) string { return "100" },
		Targets: []Target{{Limit: 40}, {Against: ImplQuickJSWasi, Limit: 1}},
	},
	{
		Name: "rss_per_live_instance", What: "resident memory per live run, {{live}} parked on a call", Kind: LiveMemory,
		Unit: "MB", Scale: 1 << 20, Tools: []string{"wait"}, Program: `return await tools.wait()`,
		Answer:  func(Params, int) string { return "true" },
		Targets: []Target{{Limit: 2}, {Against: ImplQuickJSWasi, Limit: 1}},
	},
	{
		Name: "runs_per_second", What: "trivial runs per second, {{parallel}} at a time through one executor", Kind: Throughput,
		Unit: "runs/s", Scale: 1, Program: `return "hello"`, HigherIsBetter: true,
		Answer:  func(Params, int) string { return `"hello"` },
		Targets: []Target{{Against: ImplQuickJSWasi, Limit: 1}},
	},
	{
		Name: "compute_loop", What: "a CPU-bound loop of {{iterations}} iterations, end to end", Kind: Latency,
		Unit: "ms", Scale: 1e6,
		Program: `let s = 0; for (let i = 0; i < {{iterations}}; i++) { s = (s + i * i) % 1000003 } return s`,
		Answer:  func(p Params, _ int) string { return strconv.Itoa(computeLoop(p.Iterations)) },
		Targets: []Target{{Against: ImplQuickJSWasi, Limit: 1}},
	},
}

// computeLoop is compute_loop's answer, computed in Go.
func computeLoop(n int) int {
	s := 0
	for i := range n {
		s = (s + i*i) % 1000003
	}
	return s
}

// Lookup returns the workload named name.
func Lookup(name string) (Workload, error) {
	for _, w := range Workloads {
		if w.Name == name {
			return w, nil
		}
	}
	names := make([]string, len(Workloads))
	for i, w := range Workloads {
		names[i] = w.Name
	}
	return Workload{}, fmt.Errorf("no workload %q: want one of %s", name, strings.Join(names, ", "))
}

// source is w's program for run i with calls nested calls.
func (w Workload) source(p Params, i, calls int) string {
	return strings.NewReplacer("{{i}}", strconv.Itoa(i), "{{calls}}", strconv.Itoa(calls),
		"{{iterations}}", strconv.Itoa(p.Iterations)).Replace(w.Program)
}

// Describe is What with the parameters filled in.
func (w Workload) Describe(p Params) string {
	return strings.NewReplacer("{{live}}", strconv.Itoa(p.Live), "{{parallel}}", strconv.Itoa(p.Parallel),
		"{{iterations}}", strconv.Itoa(p.Iterations)).Replace(w.What)
}

// NewEachRun reports whether every run of w is a program not seen before.
func (w Workload) NewEachRun() bool { return strings.Contains(w.Program, "{{i}}") }
