package bench

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The Python workloads (issue #38): pydantic/monty's workload in its
// original Python — `1 + 1` (python_1plus1) and the ten feeds of its agent
// run (python_session_feeds) — and a nested call from Python
// (python_per_call_await). ptcx runs them with Python enabled; the peers
// are the same python.wasm started fresh for every run, without an image
// (PythonFresh, python_fresh.go), and CPython run natively in a
// subprocess per run (CPythonNative, cpython.go). A peer without sessions
// measures python_session_feeds as Monty measures such sandboxes: feed i
// re-runs the blocks of feeds 1 to i, then evaluates feed i's result.

// The Python peers' names, as they appear in results.
const (
	ImplPythonWasmFresh = "python-wasm-fresh"
	ImplCPythonNative   = "cpython-native"
)

// pythonFeeds are pydantic/monty's indicative agent run
// (scripts/startup_performance.py, AGENT_BLOCKS), each feed's Code one of
// its ten blocks, in its Python; Result is what ptcx's session returns
// after the block (its final expression), and Answer that value's JSON as
// the guest writes it (a float keeps its ".0").
var pythonFeeds = []Feed{
	{Code: `orders = [{'sku': 'A1', 'qty': 2, 'price': 3.5}, {'sku': 'B2', 'qty': 1, 'price': 12.0}, {'sku': 'C3', 'qty': 5, 'price': 1.0}]`,
		Result: "len(orders)", Answer: "3"},
	{Code: "def line_total(o):\n    return o['qty'] * o['price']", Result: "line_total(orders[0])", Answer: "7.0"},
	{Code: `totals = [line_total(o) for o in orders]`, Result: "totals", Answer: "[7.0,12.0,5.0]"},
	{Code: `grand = sum(totals)`, Result: "grand", Answer: "24.0"},
	{Code: `biggest = max(orders, key=line_total)['sku']`, Result: "biggest", Answer: `"B2"`},
	{Code: "import json\nsummary = json.dumps({'grand': grand, 'biggest': biggest})", Result: "summary",
		Answer: `"{\"grand\": 24.0, \"biggest\": \"B2\"}"`},
	{Code: `discount = 0.1 if grand > 10 else 0`, Result: "discount", Answer: "0.1"},
	{Code: `net = round(grand * (1 - discount), 2)`, Result: "net", Answer: "21.6"},
	{Code: `report = f'{len(orders)} orders, total {net}, biggest {biggest}'`, Result: "report", Answer: montyReport},
	{Code: `print(report)`, Result: "report", Answer: montyReport},
}

// pythonPerCall is python_per_call_await's program: per_call_await's, in
// Python.
const pythonPerCall = "s = 0\nfor i in range({{calls}}):\n    s += (await tools.echo(i=i))['i']\ns"

// measureAfresh measures a Python Latency or Session job on a peer whose
// every run starts afresh (run: a fresh instance, a new process), which has
// nothing to keep warm between runs: it warms up once, on the first job of
// a workload it is given (warmed records those), not in every round. A
// Session sample is the feeds re-run as Monty re-runs them (reRunFeeds).
// Other kinds are unsupported.
func measureAfresh(ctx context.Context, name string, j Job, run RunFunc, warmed map[string]bool) (Raw, error) {
	var sample func(i int) error
	warmup := func() error { return run(ctx, j.Warmup()) }
	switch j.Kind {
	case Latency:
		sample = func(i int) error { return run(ctx, j.Program(i)) }
	case Session:
		sample = func(int) error { return reRunFeeds(ctx, j, run) }
		warmup = func() error { return sample(0) }
	default:
		return Raw{}, fmt.Errorf("%w: %s starts every run afresh: it measures Python's latency and session workloads only",
			ErrUnsupported, name)
	}
	if !warmed[j.Workload] {
		if err := warmup(); err != nil {
			return Raw{}, err
		}
		warmed[j.Workload] = true
	}
	raw := Raw{Samples: make([]float64, j.Samples)}
	for i := range j.Samples {
		start := time.Now()
		err := sample(i)
		raw.Samples[i] = float64(time.Since(start).Nanoseconds())
		if err != nil {
			return Raw{}, err
		}
	}
	return raw, nil
}

// reRunFeeds runs j's feeds as a sandbox without sessions runs them in
// Monty's benchmark: feed i is a new program of the blocks of feeds 1 to i
// and then feed i's Result, its final expression, whose value is checked.
func reRunFeeds(ctx context.Context, j Job, run RunFunc) error {
	var blocks strings.Builder
	for _, f := range j.Feeds {
		blocks.WriteString(f.Block + "\n")
		if err := run(ctx, Program{Python: blocks.String() + f.Result, Answer: f.Answer}); err != nil {
			return err
		}
	}
	return nil
}
