package bench

import (
	"fmt"

	"github.com/ptcx/ptcx/api"
)

// Params size a run of the workloads. The zero value of a field means its
// default (DefaultParams); Check bounds each.
type Params struct {
	// Runs is how many samples a Latency, Suspend or Resume workload
	// takes (after one warm-up); PerCall takes five times as many (and as
	// many baseline runs); LiveMemory, PoolMemory and Throughput, whose
	// samples are each many runs or instances, take ceil(Runs/10).
	// Default 20, 1 to 1000.
	Runs int
	// Calls is how many awaited calls per_call_await makes per run.
	// Default 2000, 1 to api.DefaultMaxCalls (the sandbox's calls per run).
	Calls int
	// Iterations is compute_loop's loop count. Default 3,000,000, 1 to
	// 100,000,000.
	Iterations int
	// Live is how many runs rss_per_live_instance parks at once, and how
	// many idle instances rss_per_pooled_instance's warm pool holds.
	// Default 100, 1 to 1000.
	Live int
	// Parallel is how many runs runs_per_second keeps going at once.
	// Default 2 (the machine the targets are set on has 2 cores), 1 to 64.
	Parallel int
	// Batch is how many runs one runs_per_second sample counts. Default
	// 200, 1 to 100,000.
	Batch int
	// Rounds splits the Runs samples of a Latency or PerCall workload
	// into rounds: in each, every implementation measures its share of
	// the samples (after its own warm-up, and for PerCall its own
	// baseline), in an order rotated by one each round, so that every
	// implementation is measured in every stretch of the run and the
	// ratios compare figures taken at the same time. A workload of new
	// programs gets new ones in every round. Default 10, or Runs when
	// fewer; 1 to Runs.
	Rounds int
	// ServeParallel is how many executions serve_rps (and its in-process
	// peer) keeps going at once. Default 8, 1 to 64.
	ServeParallel int
	// Parked is how many executions the parked workloads park at once in
	// one serve. Default 10,000 (#36), 1 to 100,000; a smoke test takes a
	// few.
	Parked int
}

// The defaults and bounds of Params.
const (
	DefaultRuns       = 20
	DefaultCalls      = 2000
	DefaultIterations = 3_000_000
	DefaultLive       = 100
	DefaultParallel   = 2
	DefaultBatch      = 200
	DefaultRounds     = 10
	DefaultServePar   = 8
	DefaultParked     = 10_000

	MaxRuns       = 1000
	MaxCalls      = api.DefaultMaxCalls
	MaxIterations = 100_000_000
	MaxLive       = 1000
	MaxParallel   = 64
	MaxBatch      = 100_000
	MaxParked     = 100_000
)

// Param is one field of Params, as data: its name (ptcx bench's flag),
// default, largest value (the smallest is 1), and what it sizes. A
// Default of 0 is one that depends on other fields (Rounds: 10, or Runs
// when fewer); 0 then asks for it.
type Param struct {
	Name         string
	Default, Max int
	Usage        string
}

// ParamList is every field of Params.
var ParamList = []Param{
	{"runs", DefaultRuns, MaxRuns, "samples per workload (`N`; per_call_await and python_per_call_await take 5N, the rss_* workloads and runs/s N/10, rounded up)"},
	{"calls", DefaultCalls, MaxCalls, "awaited calls per run of per_call_await (`N`)"},
	{"iterations", DefaultIterations, MaxIterations, "iterations of compute_loop (`N`)"},
	{"live", DefaultLive, MaxLive, "runs parked at once by rss_per_live_instance, instances in rss_per_pooled_instance's pool (`N`)"},
	{"parallel", DefaultParallel, MaxParallel, "runs at once in runs_per_second (`N`)"},
	{"batch", DefaultBatch, MaxBatch, "runs counted per runs_per_second sample (`N`)"},
	{"serve-parallel", DefaultServePar, MaxParallel, "executions at once in serve_rps and its in-process peer (`N`)"},
	{"parked", DefaultParked, MaxParked, "executions parked at once by parked_10k and parked_10k_dir (`N`)"},
	{"rounds", 0, MaxRuns, "rounds the latency and per-call workloads' samples are split into, every implementation measured in each in a rotated order (`N`, at most --runs; default 10, or --runs when fewer)"},
}

// Field is the field of p named name in ParamList; nil for another name.
func (p *Params) Field(name string) *int {
	switch name {
	case "runs":
		return &p.Runs
	case "calls":
		return &p.Calls
	case "iterations":
		return &p.Iterations
	case "live":
		return &p.Live
	case "parallel":
		return &p.Parallel
	case "batch":
		return &p.Batch
	case "rounds":
		return &p.Rounds
	case "serve-parallel":
		return &p.ServeParallel
	case "parked":
		return &p.Parked
	}
	return nil
}

// DefaultParams returns every default.
func DefaultParams() Params { return Params{}.withDefaults() }

func (p Params) withDefaults() Params {
	for _, f := range ParamList {
		if v := p.Field(f.Name); *v == 0 {
			*v = f.Default
		}
	}
	if p.Rounds == 0 {
		p.Rounds = min(DefaultRounds, p.Runs)
	}
	return p
}

// Check returns p with its defaults filled in, or a *ParamError for the
// first field out of its range; Rounds' range is 1 to Runs.
func (p Params) Check() (Params, error) {
	p = p.withDefaults()
	for _, f := range ParamList {
		if f.Default == 0 {
			continue // Rounds, bounded by Runs: below
		}
		if err := f.Check(*p.Field(f.Name)); err != nil {
			return p, err
		}
	}
	if p.Rounds < 1 || p.Rounds > p.Runs {
		return p, &ParamError{Param: "rounds", Value: p.Rounds, Max: p.Runs}
	}
	return p, nil
}

// Check returns a *ParamError when v is not within 1 to f.Max.
func (f Param) Check(v int) error {
	if v < 1 || v > f.Max {
		return &ParamError{Param: f.Name, Value: v, Max: f.Max}
	}
	return nil
}

// Samples is how many samples a workload of kind k takes.
func (p Params) Samples(k Kind) int {
	switch k {
	case LiveMemory, PoolMemory, Throughput, ServeThroughput:
		return (p.Runs + 9) / 10
	case Parked:
		return 1 // its samples are its resumes, Params.Parked of them
	case PerCall:
		return perCallFactor * p.Runs
	case ServeLatency, ServeClientTool:
		return serveFactor * p.Runs
	}
	return p.Runs
}

// serveFactor is how many times Runs a serve latency workload's samples
// are (serve_e2e, serve_client_tool): a sample is under a millisecond, and
// they spread wide (3,000 serve_e2e executions in a row: p10 150 µs, p90
// 335–390, p99 490–810, against an in-process run's 66 / 121 / 231), so
// that a round's median of two samples read 0.21 to 0.85 ms in one run.
const serveFactor = 5

// perCallFactor is how many times Runs a PerCall workload's samples are:
// a sample is a few milliseconds, so five times as many cost little, and
// its figure is the difference of two medians. Whether it steadies the
// ratio from run to run is not settled (docs/performance-notebook.md): six runs
// each way read ptcx ÷ goja 1.00–1.73 with 20 samples and 0.98–1.18 with
// 100, but eight later runs with 100 read 0.96–1.49.
const perCallFactor = 5

// rounds is how many rounds a workload of kind k is measured in: Rounds
// for Latency and PerCall, one for the rest, which take few samples of many
// runs or instances each, or are measured by ptcx alone.
func (p Params) rounds(k Kind) int {
	if k == Latency || k == PerCall || k == Session || k == AfterSession || k == ServeLatency || k == ServeClientTool {
		return p.Rounds
	}
	return 1
}

// roundSamples is how many of n samples round r of rounds takes: n split
// as evenly as it goes, the first rounds one more.
func roundSamples(n, rounds, r int) int {
	s := n / rounds
	if r < n%rounds {
		s++
	}
	return s
}

// ParamError is a parameter out of its range: Param (the field's name in
// lower case, as ptcx bench's flag), its value, and the most it may be.
type ParamError struct {
	Param      string
	Value, Max int
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("bench: %s %d: want 1 to %d", e.Param, e.Value, e.Max)
}
