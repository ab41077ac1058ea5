package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// How many samples each kind takes of Runs: a latency workload Runs, a
// per-call one and the serve latencies five times as many (their samples
// are cheap and spread wide), the throughput and memory ones a tenth
// (each sample is many runs), a parked one one (its samples are resumes).
func TestParams_samples(t *testing.T) {
	p := Params{Runs: 20}
	for k, want := range map[Kind]int{
		Latency: 20, Session: 20, AfterSession: 20, Suspend: 20,
		PerCall: 100, ServeLatency: 100, ServeClientTool: 100,
		Throughput: 2, ServeThroughput: 2, LiveMemory: 2, PoolMemory: 2,
		Parked: 1,
	} {
		require.Equal(t, want, p.Samples(k), "%s", k)
	}
}
