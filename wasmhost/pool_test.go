package wasmhost_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

func TestConfig_WithPool_bounds(t *testing.T) {
	tests := []struct {
		name string
		size int
		want string
	}{
		{"off", 0, ""},
		{"default", wasmhost.DefaultPoolSize, ""},
		{"at the maximum", wasmhost.MaxPoolSize, ""},
		{"past the maximum", wasmhost.MaxPoolSize + 1, "a pool of 1025 instances is above the maximum of 1024"},
		{"negative", -1, "a pool of -1 instances: the size must be positive (0 turns the pool off)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, err := wasmhost.New(context.Background(), testConfig().WithPool(tt.size))
			if tt.want != "" {
				require.EqualError(t, err, "wasmhost: "+tt.want)
				return
			}
			require.NoError(t, err)
			defer rt.Close(context.Background())
			require.Equal(t, tt.size, rt.PoolStats().Size)
			require.Zero(t, rt.PoolStats().Idle, "the pool fills at the first run, not before")
		})
	}
}

// waitIdle waits until the pool has at least n idle instances.
func waitIdle(t *testing.T, rt *wasmhost.Runtime, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return rt.PoolStats().Idle >= n }, 10*time.Second, time.Millisecond,
		"the pool did not fill: %+v", rt.PoolStats())
}

func TestRuntime_pool_fillsAndIsTaken(t *testing.T) {
	rt := newRuntime(t, testConfig().WithPool(2))
	recycled := recycledPerRun(t, rt)
	requireHealthy(t, rt) // a miss: the first run restores its own
	s := rt.PoolStats()
	require.Equal(t, int64(1), s.Misses)
	require.Equal(t, recycled, s.Recycled, "the run settled: its instance joined the pool before Run returned")
	waitIdle(t, rt, 2)
	s = rt.PoolStats()
	require.Positive(t, s.Bytes)
	require.Zero(t, rt.Usage().CommittedBytes, "the pool's charge is not a run's")
	requireHealthy(t, rt)
	s = rt.PoolStats()
	require.Equal(t, int64(1), s.Hits)
	require.Equal(t, 2*recycled, s.Recycled)
	waitIdle(t, rt, 2)
	s = rt.PoolStats()
	require.LessOrEqual(t, s.Idle, 2*s.Size, "recycled instances fill the pool to twice its size at most")
	require.Equal(t, s.Restores+s.Recycled-s.Hits, int64(s.Idle), "every instance restored or recycled is idle or was taken: %+v", s)
	require.NoError(t, s.LastError)
}

// TestRuntime_pool_yieldsToRuns: pooled instances are charged to the
// committed memory cap, and give it up to a run that would not fit beside
// them (with no admission wait, the run would fail with ErrBusy).
func TestRuntime_pool_yieldsToRuns(t *testing.T) {
	const limit = 8 << 20
	rt := newRuntime(t, testConfig().WithPool(2).WithLimits(api.Limits{MemoryBytes: limit}).
		WithMaxCommittedMemory(limit).WithAdmissionWait(0))
	requireHealthy(t, rt)
	waitIdle(t, rt, 2)
	requireHealthy(t, rt) // takes one; the other is in its way
	requireHealthy(t, rt)
	require.Zero(t, rt.Usage().CommittedBytes)
}

func TestRuntime_WithImage_off(t *testing.T) {
	rt := newRuntime(t, testConfig().WithImage(false))
	requireHealthy(t, rt)
	requireHealthy(t, rt)
	require.Equal(t, wasmhost.PoolStats{}, rt.PoolStats())
	require.True(t, newRuntime(t, testConfig().WithPool(0)).PoolStats().Image)
}

// TestRuntime_Run_restoredIsReseeded: instances restored from one image do
// not share Math.random or the performance.now origin; deterministic ones
// repeat them exactly.
func TestRuntime_Run_restoredIsReseeded(t *testing.T) {
	const js = `return [Math.random(), performance.now(), performance.timeOrigin]`
	run := func(rt *wasmhost.Runtime) []float64 {
		out, re, _ := runJS(t, rt, js, api.Limits{})
		require.Nil(t, re)
		var v []float64
		require.NoError(t, json.Unmarshal(out.Result, &v))
		return v
	}
	rt := newRuntime(t, testConfig().WithPool(2))
	a, b := run(rt), run(rt)
	require.NotEqual(t, a[0], b[0])
	for _, v := range [][]float64{a, b} {
		require.Less(t, v[1], 5000.0, "performance.now counts from the run's start, not the image's")
	}
	require.Greater(t, b[2], a[2], "performance.timeOrigin is each run's")
	det := newRuntime(t, testConfig().WithDeterministic(3).WithPool(2))
	c, d := run(det), run(det)
	require.Equal(t, c, d)
}
