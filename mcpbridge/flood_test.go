//go:build linux

package mcpbridge_test

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
)

// cpuTime is the CPU this process has used, user and system.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// An upstream that floods notifications before answering: the call gets its
// answer, the host spends a bounded CPU time on the flood, and what was
// over the budget was dropped and counted. Before the budget, 50,000
// notifications cost the host about 8.5 s of CPU (measured on the 2-core
// development machine); the bound is far above what it costs now (0.1 s; 1.7 s under -race).
func TestBridge_flood_callCompletesWithBoundedCPU(t *testing.T) {
	const burst, rate = 1000, 100 // unsolicitedBurst, unsolicitedRate
	for _, tt := range []struct {
		name   string
		count  int
		maxCPU time.Duration
	}{
		{"below the burst", burst - 1, 2 * time.Second},
		{"at the burst", burst, 2 * time.Second},
		{"far past the burst", 50_000, 5 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := connect(t, upstream(), api.ModeNative, executor.NewConfig())
			cpu0, wall0 := cpuTime(t), time.Now()
			r := v.call(context.Background(), "up.flood", `{"count": `+strconv.Itoa(tt.count)+`}`)
			cpu, wall := cpuTime(t)-cpu0, time.Since(wall0)
			t.Logf("%d notifications: wall %v, host CPU %v, dropped %d", tt.count, wall, cpu, v.b.Dropped())
			require.Nil(t, r.Err, r.Text)
			require.Equal(t, "flooded", r.Text)
			require.Less(t, cpu, tt.maxCPU)
			over := max(0, tt.count-burst)
			require.LessOrEqual(t, v.b.Dropped(), int64(over))
			require.GreaterOrEqual(t, v.b.Dropped(), int64(over)-int64(wall.Seconds()*rate)-1)

			require.JSONEq(t, `{"text":"after"}`, string(v.ok(t, "up.echo", `{"text":"after"}`)), "the session goes on")
		})
	}
}
