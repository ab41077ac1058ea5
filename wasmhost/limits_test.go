package wasmhost_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

func TestRuntime_Run_programLimitsAreLowered(t *testing.T) {
	rt := newRuntime(t, testConfig().WithLimits(api.Limits{MaxCalls: 3, OutputBytes: 1000}))
	require.Equal(t, 3, rt.Limits().MaxCalls)
	require.Equal(t, api.DefaultMaxPendingCalls, rt.Limits().MaxPendingCalls)

	tests := []struct {
		name    string
		limits  api.Limits
		calls   int
		message string
	}{
		{"a higher limit is clamped", api.Limits{MaxCalls: 100}, 3, "limit of 3 nested calls"},
		{"a lower limit applies", api.Limits{MaxCalls: 2}, 2, "limit of 2 nested calls"},
		{"zero means the Runtime's", api.Limits{}, 3, "limit of 3 nested calls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, re, _ := runJS(t, rt, `for (;;) await tools.echo({})`, tt.limits)
			require.NotNil(t, re)
			require.Contains(t, re.Message, tt.message)
			require.Equal(t, tt.calls, out.Stats.Calls)
		})
	}
	_, re, _ := runJS(t, rt, `console.log("x".repeat(2000))`, api.Limits{OutputBytes: 1 << 20})
	require.NotNil(t, re)
	require.Equal(t, api.KindOutputLimit, re.Kind)
	require.Contains(t, re.Message, "output limit of 1000 bytes")
}

func TestRuntime_Run_memoryLimitIsLowered(t *testing.T) {
	// 64 MiB of typed arrays fit the Runtime's default limit, not the
	// program's 16 MiB.
	js := `const a = []; for (let i = 0; i < 16; i++) a.push(new Uint8Array(4 << 20)); return a.length`
	rt := sharedRuntime(t)
	out, re, _ := runJS(t, rt, js, api.Limits{})
	require.Nil(t, re)
	require.JSONEq(t, `16`, string(out.Result))
	_, re, _ = runJS(t, rt, js, api.Limits{MemoryBytes: 16 << 20})
	require.NotNil(t, re)
	require.Equal(t, api.KindMemory, re.Kind)
	require.Contains(t, re.Message, "memory limit of 16 MiB")
}

func TestRuntime_Run_invalidLimits(t *testing.T) {
	rt := sharedRuntime(t)
	tests := []struct {
		name   string
		limits api.Limits
		want   string
	}{
		{"negative compute time", api.Limits{ComputeTime: -time.Second}, "compute time limit -1s is negative"},
		{"negative calls", api.Limits{MaxCalls: -1}, "nested call limit -1 is negative"},
		{"memory below the minimum", api.Limits{MemoryBytes: 1 << 20}, "below the minimum of 4194304 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rt.Run(context.Background(), wasmhost.Program{JS: `return 1`, Limits: tt.limits}, &tools{})
			require.ErrorContains(t, err, tt.want)
			var re *wasmhost.RunError
			require.False(t, errors.As(err, &re), "an invalid limit is not a program failure")
		})
	}
}

func TestNew_invalidLimits(t *testing.T) {
	tests := []struct {
		name   string
		limits api.Limits
		want   string
	}{
		{"negative", api.Limits{WallTime: -1}, "wall time limit -1ns is negative"},
		{"memory below the minimum", api.Limits{MemoryBytes: 4096}, "below the minimum"},
		{"memory above 4 GiB", api.Limits{MemoryBytes: 5 << 30}, "above the 4 GiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := wasmhost.New(context.Background(), testConfig().WithLimits(tt.limits))
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestRuntime_Run_pendingCallsAreCounted(t *testing.T) {
	// Two calls in flight at most: the third is refused until one resolves.
	out, re, _ := runJS(t, sharedRuntime(t), `
const a = tools.slow({ms: 20}), b = tools.slow({ms: 20});
let refused = "";
try { await tools.echo({}) } catch (e) { refused = e.message }
await a; await b;
const after = await tools.echo({n: 1});
return {refused, after}`, api.Limits{MaxPendingCalls: 2})
	require.Nil(t, re)
	require.JSONEq(t, `{"refused":"too many nested calls pending at once (the limit is 2): await some of them before starting more","after":{"n":1}}`,
		string(out.Result))
	require.Equal(t, 3, out.Stats.Calls)
}

// Program.Deadline ends the run at that instant when it comes before the
// wall limit, as a wall timeout; a later one changes nothing; one already
// past ends the run at once.
func TestRuntime_Run_deadline(t *testing.T) {
	rt := sharedRuntime(t)
	for _, tc := range []struct {
		name           string
		wall, deadline time.Duration
		atLeast, below time.Duration
	}{
		{"sooner than the wall limit", 20 * time.Second, 200 * time.Millisecond, 200 * time.Millisecond, 10 * time.Second},
		{"later than the wall limit", 200 * time.Millisecond, time.Hour, 200 * time.Millisecond, 10 * time.Second},
		{"already past", 20 * time.Second, -time.Second, 0, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &tools{}
			start := time.Now()
			_, err := rt.Run(context.Background(), wasmhost.Program{JS: `await tools.hang()`, Tools: toolNames,
				Limits: api.Limits{WallTime: tc.wall}, Deadline: start.Add(tc.deadline)}, d)
			took := time.Since(start)
			var re *wasmhost.RunError
			require.True(t, errors.As(err, &re), "%v", err)
			require.Equal(t, api.KindTimeout, re.Kind, re.Message)
			require.Contains(t, re.Message, "wall time limit")
			require.GreaterOrEqual(t, took, tc.atLeast)
			require.Less(t, took, tc.below)
		})
	}
	requireHealthy(t, rt)
}
