package bench

import (
	"fmt"

	"github.com/ptcx/ptcx/api"
)

// Params size a run of the workloads. The zero value of a field means its
// default (DefaultParams); Check bounds each.
type Params struct {
	// N is how many samples a Latency or PerCall workload takes (after one
	// warm-up run); LiveMemory and Throughput, whose samples are each many
	// runs, take ceil(N/10). Default 20, 1 to 1000.
	N int
	// Calls is how many awaited calls per_call_await makes per run.
	// Default 2000, 1 to api.DefaultMaxCalls (the sandbox's calls per run).
	Calls int
	// Iterations is compute_loop's loop count. Default 3,000,000, 1 to
	// 100,000,000.
	Iterations int
	// Live is how many runs rss_per_live_instance parks at once. Default
	// 100, 1 to 1000.
	Live int
	// Parallel is how many runs runs_per_second keeps going at once.
	// Default 2 (the machine the targets are set on has 2 cores), 1 to 64.
	Parallel int
	// Runs is how many runs one runs_per_second sample counts. Default 200,
	// 1 to 100,000.
	Runs int
}

// The defaults and bounds of Params.
const (
	DefaultN          = 20
	DefaultCalls      = 2000
	DefaultIterations = 3_000_000
	DefaultLive       = 100
	DefaultParallel   = 2
	DefaultRuns       = 200

	MaxN          = 1000
	MaxCalls      = api.DefaultMaxCalls
	MaxIterations = 100_000_000
	MaxLive       = 1000
	MaxParallel   = 64
	MaxRuns       = 100_000
)

// DefaultParams returns every default.
func DefaultParams() Params { return Params{}.withDefaults() }

func (p Params) withDefaults() Params {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&p.N, DefaultN)
	def(&p.Calls, DefaultCalls)
	def(&p.Iterations, DefaultIterations)
	def(&p.Live, DefaultLive)
	def(&p.Parallel, DefaultParallel)
	def(&p.Runs, DefaultRuns)
	return p
}

// Check returns p with its defaults filled in, or an error naming the first
// field out of its range.
func (p Params) Check() (Params, error) {
	p = p.withDefaults()
	for _, f := range []struct {
		name     string
		v, limit int
	}{
		{"n", p.N, MaxN}, {"calls", p.Calls, MaxCalls}, {"iterations", p.Iterations, MaxIterations},
		{"live", p.Live, MaxLive}, {"parallel", p.Parallel, MaxParallel}, {"runs", p.Runs, MaxRuns},
	} {
		if f.v < 1 || f.v > f.limit {
			return p, fmt.Errorf("bench: %s %d: want 1 to %d", f.name, f.v, f.limit)
		}
	}
	return p, nil
}

// samples is how many samples a workload of kind k takes.
func (p Params) samples(k Kind) int {
	if k == LiveMemory || k == Throughput {
		return (p.N + 9) / 10
	}
	return p.N
}
