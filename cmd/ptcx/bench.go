package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

var benchCommand = command{
	name: "bench",
	summary: "Measure the sandbox on this machine against the project's targets: start-up, a\n" +
		"hello-world run_code call, an awaited nested call, a Promise.all fan-out and the\n" +
		"memory of an idle instance, with built-in tools. --check exits 1 when a target is\n" +
		"missed. Exit status: 0 ok, 1 a target missed (with --check) or setup failed, 2 usage.",
	usage: "bench [--runs N] [--calls N] [--json] [--check]",
	run:   runBench,
}

// benchResult is one measurement. Value is the median (p50) in Unit.
type benchResult struct {
	Name   string  `json:"name"`
	What   string  `json:"what"`
	Unit   string  `json:"unit"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90,omitempty"`
	Target float64 `json:"target,omitempty"` // the most the project allows; 0: none
	OK     bool    `json:"ok"`
	Note   string  `json:"note,omitempty"`
}

type benchReport struct {
	Version string        `json:"version"`
	Go      string        `json:"go"`
	Target  string        `json:"platform"`
	CPUs    int           `json:"cpus"`
	Results []benchResult `json:"results"`
}

func runBench(ctx context.Context, c command, s *stdio, args []string) int {
	fs := newFlags(c, s)
	runs := fs.Int("runs", 30, "how many times each workload runs (`N`, 1 to 1000); medians and p90s are over these")
	calls := fs.Int("calls", 5000, "sequential awaits in the nested-call workload (`N`, 1 to 10000)")
	asJSON := fs.Bool("json", false, "print the report as one JSON object")
	check := fs.Bool("check", false, "exit 1 when a measurement misses its target")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(fs, s, "unexpected argument %q", pos[0])
	}
	if err := checkBenchFlags(*runs, *calls); err != nil {
		return usageError(fs, s, "%v", err)
	}

	b, err := newBench(ctx)
	if err != nil {
		return fail(s, err)
	}
	defer b.close()
	report := benchReport{Version: currentVersion(), Go: runtime.Version(),
		Target: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU()}
	report.Results = append(report.Results, b.startup)
	for _, f := range []func(context.Context, int, int) (benchResult, error){b.hello, b.nested, b.fanOut, b.idle} {
		if ctx.Err() != nil {
			return fail(s, ctx.Err())
		}
		r, err := f(ctx, *runs, *calls)
		if err != nil {
			return fail(s, err)
		}
		report.Results = append(report.Results, r)
	}
	if *asJSON {
		out, err := json.Marshal(report)
		if err != nil {
			return fail(s, err)
		}
		s.out.Write(append(out, '\n'))
	} else {
		printBench(s, report)
	}
	if *check {
		for _, r := range report.Results {
			if !r.OK {
				return exitTool
			}
		}
	}
	return exitOK
}

// checkBenchFlags checks --runs and --calls against their ranges.
func checkBenchFlags(runs, calls int) error {
	if runs < 1 || runs > maxBenchRuns {
		return fmt.Errorf("--runs %d: want 1 to %d", runs, maxBenchRuns)
	}
	if calls < 1 || calls > maxBenchCalls {
		return fmt.Errorf("--calls %d: want 1 to %d (the sandbox's limit on calls per run)", calls, maxBenchCalls)
	}
	return nil
}

const (
	maxBenchRuns  = 1000
	maxBenchCalls = 10000 // wasmhost's default MaxCalls
)

func printBench(s *stdio, r benchReport) {
	fmt.Fprintf(s.out, "ptcx %s, %s, %s, %d CPUs\n\n", r.Version, r.Go, r.Target, r.CPUs)
	width := 0
	for _, m := range r.Results {
		width = max(width, len([]rune(m.What)))
	}
	for _, m := range r.Results {
		line := fmt.Sprintf("%-*s  p50 %-10s", width, m.What, formatUnit(m.P50, m.Unit))
		if m.P90 > 0 {
			line += "  p90 " + fmt.Sprintf("%-10s", formatUnit(m.P90, m.Unit))
		} else {
			line += fmt.Sprintf("  %14s", "")
		}
		if m.Target > 0 {
			verdict := "ok"
			if !m.OK {
				verdict = "MISSED"
			}
			line += fmt.Sprintf("  target ≤ %-9s %s", formatUnit(m.Target, m.Unit), verdict)
		}
		if m.Note != "" {
			line += "  (" + m.Note + ")"
		}
		fmt.Fprintln(s.out, strings.TrimRight(line, " "))
	}
}

func formatUnit(v float64, unit string) string {
	switch unit {
	case "x":
		return fmt.Sprintf("%.2fx", v)
	case "MB":
		return fmt.Sprintf("%.2f MB", v)
	default:
		return fmt.Sprintf("%.2f %s", v, unit)
	}
}

// bench is the machinery the workloads share: one sandbox and one ptc
// executor over built-in tools.
type bench struct {
	rt      *wasmhost.Runtime
	exec    *executor.Executor
	startup benchResult
	release chan struct{} // the wait tool's bodies return when it is closed
	waiting sync.WaitGroup
}

func newBench(ctx context.Context) (*bench, error) {
	b := &bench{}
	start := time.Now()
	// The idle workload parks idleRuns runs at the default memory limit at
	// once: the committed memory cap (half the machine's memory by
	// default) is raised to admit them, since they touch ~1 MB each.
	rt, err := wasmhost.New(ctx, wasmhost.NewConfig().WithMaxCommittedMemory(2*idleRuns*api.DefaultMemoryBytes))
	if err != nil {
		return nil, err
	}
	b.rt = rt
	b.startup = benchResult{Name: "startup", What: "sandbox start-up (compile the guest, or load it from the cache)",
		Unit: "ms", P50: ms(time.Since(start)), OK: true}
	reg := registry.New()
	tools := []registry.Tool{
		{Name: "echo", Description: "Return the arguments.", ConcurrencySafe: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"i":{"type":"integer"}},"required":["i"]}`),
			Body: func(_ context.Context, in api.Input) (api.Output, error) {
				return api.Output{Value: in.Args}, nil
			}},
		{Name: "sleep20", Description: "Wait 20 ms.", ConcurrencySafe: true,
			Body: func(ctx context.Context, _ api.Input) (api.Output, error) {
				t := time.NewTimer(20 * time.Millisecond)
				defer t.Stop()
				select {
				case <-t.C:
					return api.ValueOutput(true)
				case <-ctx.Done():
					return api.Output{}, ctx.Err()
				}
			}},
		{Name: "wait", Description: "Wait until the benchmark releases it.", ConcurrencySafe: true,
			Body: func(ctx context.Context, _ api.Input) (api.Output, error) {
				b.waiting.Done()
				select {
				case <-b.release:
					return api.ValueOutput(true)
				case <-ctx.Done():
					return api.Output{}, ctx.Err()
				}
			}},
	}
	if err := reg.DeclareMode(registry.Deployment, api.ModePTC); err != nil {
		b.close()
		return nil, err
	}
	for _, t := range tools {
		if err := reg.Register(registry.Deployment, t); err != nil {
			b.close()
			return nil, err
		}
	}
	b.exec, err = executor.New(reg, executor.NewConfig().WithRuntime(rt).WithMaxParallel(100))
	if err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *bench) close() { _ = b.rt.Close(context.Background()) }

// program runs code once through run_code and returns how long it took.
func (b *bench) program(ctx context.Context, code string) (time.Duration, error) {
	args, err := json.Marshal(map[string]any{"code": code, "description": "ptcx bench"})
	if err != nil {
		return 0, err
	}
	start := time.Now()
	r := b.exec.Execute(ctx, executor.Call{Name: registry.RunCode, Args: args})
	d := time.Since(start)
	if !r.OK() {
		return 0, fmt.Errorf("bench program failed: %s", r.Text)
	}
	return d, nil
}

// repeat runs code runs times (after one warm-up run) and returns the
// durations, sorted.
func (b *bench) repeat(ctx context.Context, runs int, code string) ([]time.Duration, error) {
	if _, err := b.program(ctx, code); err != nil {
		return nil, err
	}
	ds := make([]time.Duration, runs)
	for i := range ds {
		d, err := b.program(ctx, code)
		if err != nil {
			return nil, err
		}
		ds[i] = d
	}
	slices.Sort(ds)
	return ds, nil
}

func (b *bench) hello(ctx context.Context, runs, _ int) (benchResult, error) {
	ds, err := b.repeat(ctx, runs, `return "hello"`)
	if err != nil {
		return benchResult{}, err
	}
	r := benchResult{Name: "hello", What: "run_code hello world, end to end", Unit: "ms",
		P50: ms(quantile(ds, 0.5)), P90: ms(quantile(ds, 0.9)), Target: 3}
	r.OK = r.P50 <= r.Target
	return r, nil
}

func (b *bench) nested(ctx context.Context, runs, calls int) (benchResult, error) {
	code := fmt.Sprintf(`let s = 0; for (let i = 0; i < %d; i++) { s += (await tools.echo({i})).i } return s`, calls)
	ds, err := b.repeat(ctx, max(1, runs/6), code)
	if err != nil {
		return benchResult{}, err
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(calls) / 1e3 }
	r := benchResult{Name: "nested_call", What: fmt.Sprintf("awaited nested call (%d sequential awaits, run / calls)", calls),
		Unit: "µs", P50: per(quantile(ds, 0.5)), P90: per(quantile(ds, 0.9)), Target: 10}
	r.OK = r.P50 <= r.Target
	return r, nil
}

func (b *bench) fanOut(ctx context.Context, runs, _ int) (benchResult, error) {
	ds, err := b.repeat(ctx, max(1, runs/3), `return (await Promise.all(Array.from({length: 100}, () => tools.sleep20()))).length`)
	if err != nil {
		return benchResult{}, err
	}
	ratio := func(d time.Duration) float64 { return float64(d) / float64(20*time.Millisecond) }
	r := benchResult{Name: "fan_out", What: "Promise.all of 100 calls to a 20 ms tool, vs one call", Unit: "x",
		P50: ratio(quantile(ds, 0.5)), P90: ratio(quantile(ds, 0.9)), Target: 2}
	r.OK = r.P50 <= r.Target
	return r, nil
}

// idleRuns is how many runs the idle workload parks at once.
const idleRuns = 100

// idle parks idleRuns runs on a tool call and measures how much the
// process's resident memory grew, per run.
func (b *bench) idle(ctx context.Context, _, _ int) (benchResult, error) {
	r := benchResult{Name: "idle_instance", What: fmt.Sprintf("idle live instance (%d parked, resident memory each)", idleRuns),
		Unit: "MB", Target: 2}
	before, ok := residentBytes()
	if !ok {
		r.OK, r.Note = true, "not measured: no /proc/self/statm on this system"
		return r, nil
	}
	b.release = make(chan struct{})
	b.waiting.Add(idleRuns)
	var wg sync.WaitGroup
	errs := make(chan error, idleRuns)
	for range idleRuns {
		wg.Go(func() {
			if _, err := b.program(ctx, `await tools.wait(); return 1`); err != nil {
				errs <- err
			}
		})
	}
	parked := make(chan struct{})
	go func() { b.waiting.Wait(); close(parked) }()
	select {
	case <-parked:
	case err := <-errs:
		close(b.release)
		wg.Wait()
		return r, err
	}
	after, _ := residentBytes()
	close(b.release)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return r, err
	}
	r.P50 = float64(after-before) / idleRuns / (1 << 20)
	r.OK = r.P50 <= r.Target
	return r, nil
}

// residentBytes returns the process's resident memory after returning free
// Go heap to the OS, from /proc/self/statm.
func residentBytes() (int64, bool) {
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(b), &size, &resident); err != nil {
		return 0, false
	}
	return resident * int64(os.Getpagesize()), true
}

// quantile returns the q-quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
