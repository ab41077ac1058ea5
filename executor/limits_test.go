package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// runWithLimits runs code under the caller's limits, given as JSON text so
// that any number form can be tried.
func runWithLimits(e *executor.Executor, code, limits string) api.Result {
	c, _ := json.Marshal(code)
	args := fmt.Sprintf(`{"code": %s, "description": "limits", "limits": %s}`, c, limits)
	return e.Execute(context.Background(), executor.Call{Name: "run_code", Args: json.RawMessage(args)})
}

// Every limit a caller may set, at 1, below and at its minimum, at the
// deployment's value, past it and far past it (in every JSON form of an
// integer): a clear INVALID_ARGS, a run within the limit, or the limit's own
// failure, never INTERNAL.
func TestRunCode_limits_everyFieldAtItsBounds(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	const twoCalls = `await tools.users(); return (await tools.users()).length`
	for _, tt := range []struct {
		name, code, limits string
		want               string // "ok", "invalid", a CODE_RUN_FAILED kind, or "ok|timeout"
	}{
		{"timeout_ms 1", `return 1`, `{"timeout_ms": 1}`, "ok|timeout"},
		{"timeout_ms at the deployment's", `return 1`, fmt.Sprintf(`{"timeout_ms": %d}`, api.DefaultComputeTime.Milliseconds()), "ok"},
		{"timeout_ms past it", `return 1`, fmt.Sprintf(`{"timeout_ms": %d}`, api.DefaultComputeTime.Milliseconds()+1), "ok"},
		{"timeout_ms 0", `return 1`, `{"timeout_ms": 0}`, "invalid"},
		{"timeout_ms 1e30", `return 1`, `{"timeout_ms": 1e30}`, "ok"},
		{"wall_ms 1", `return 1`, `{"wall_ms": 1}`, "ok|timeout"},
		{"wall_ms 1 waiting on a timer", `await new Promise((r) => setTimeout(r, 1000)); return 1`, `{"wall_ms": 1}`, "timeout"},
		{"wall_ms at the deployment's", `return 1`, fmt.Sprintf(`{"wall_ms": %d}`, api.DefaultWallTime.Milliseconds()), "ok"},
		{"wall_ms past it, in exponent form", `return 1`, `{"wall_ms": 6.00001e5}`, "ok"},
		{"wall_ms past int64", `return 1`, `{"wall_ms": 99999999999999999999999}`, "ok"},
		{"memory_mb 1", `return 1`, `{"memory_mb": 1}`, "invalid"},
		{"memory_mb below the minimum", `return 1`, fmt.Sprintf(`{"memory_mb": %d}`, registry.MinMemoryMB-1), "invalid"},
		{"memory_mb at the minimum", `return 1`, fmt.Sprintf(`{"memory_mb": %d}`, registry.MinMemoryMB), "ok"},
		{"memory_mb at the minimum, written 4.0", `return 1`, `{"memory_mb": 4.0}`, "ok"},
		{"memory_mb past the minimum", `return 1`, fmt.Sprintf(`{"memory_mb": %d}`, registry.MinMemoryMB+1), "ok"},
		{"memory_mb at the minimum, filled", `const a = []; while (true) a.push("x".repeat(1000) + a.length)`, `{"memory_mb": 4}`, "memory"},
		{"memory_mb at the deployment's", `return 1`, fmt.Sprintf(`{"memory_mb": %d}`, api.DefaultMemoryBytes>>20), "ok"},
		{"memory_mb past it", `return 1`, fmt.Sprintf(`{"memory_mb": %d}`, api.DefaultMemoryBytes>>20+1), "ok"},
		{"memory_mb 1e30", `return 1`, `{"memory_mb": 1e30}`, "ok"},
		{"output_bytes 1", `return 1`, `{"output_bytes": 1}`, "ok"},
		{"output_bytes 1, no output", `const x = 1`, `{"output_bytes": 1}`, "ok"},
		{"output_bytes 1, two bytes", `return 12`, `{"output_bytes": 1}`, "output-limit"},
		{"output_bytes 1, a log", `console.log("ab")`, `{"output_bytes": 1}`, "output-limit"},
		{"output_bytes at the deployment's", `return 1`, fmt.Sprintf(`{"output_bytes": %d}`, api.DefaultOutputBytes), "ok"},
		{"output_bytes past it", fmt.Sprintf(`return "x".repeat(%d)`, api.DefaultOutputBytes-2), fmt.Sprintf(`{"output_bytes": %d}`, api.DefaultOutputBytes+1), "ok"},
		{"output_bytes past it, over the deployment's", fmt.Sprintf(`return "x".repeat(%d)`, api.DefaultOutputBytes+1), fmt.Sprintf(`{"output_bytes": %d}`, api.DefaultOutputBytes+1), "output-limit"},
		{"output_bytes past int64", `return 1`, `{"output_bytes": 1e300}`, "ok"},
		{"max_calls 1, one call", `return (await tools.users()).length`, `{"max_calls": 1}`, "ok"},
		{"max_calls 1, two calls", twoCalls, `{"max_calls": 1}`, "exception"},
		{"max_calls 2, two calls", twoCalls, `{"max_calls": 2}`, "ok"},
		{"max_calls past the deployment's", twoCalls, fmt.Sprintf(`{"max_calls": %d}`, api.DefaultMaxCalls+1), "ok"},
		{"max_calls past int64", twoCalls, `{"max_calls": 1e19}`, "ok"},
		{"max_calls a fraction", twoCalls, `{"max_calls": 1.5}`, "invalid"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runWithLimits(e, tt.code, tt.limits)
			if r.OK() {
				require.Contains(t, []string{"ok", "ok|timeout"}, tt.want, "succeeded: %s", r.Text)
				return
			}
			require.NotEqual(t, api.CodeInternal, r.Err.Code, r.Text)
			switch tt.want {
			case "invalid":
				require.Equal(t, api.CodeInvalidArgs, r.Err.Code, r.Text)
				require.Len(t, r.Err.Violations, 1, r.Text)
				require.Contains(t, r.Err.Violations[0], "at /limits/", r.Text)
			case "ok|timeout":
				require.Equal(t, api.KindTimeout, r.Err.Kind, r.Text)
			default:
				require.Equal(t, api.CodeCodeRunFailed, r.Err.Code, r.Text)
				require.Equal(t, api.Kind(tt.want), r.Err.Kind, r.Text)
			}
		})
	}
}

// The schema's minimum for memory_mb (registry.MinMemoryMB, tested to be
// the schema's number in registry) is the sandbox's own minimum.
func TestRunCode_limits_memoryMinimumIsTheSandboxes(t *testing.T) {
	require.EqualValues(t, api.MinMemoryBytes, registry.MinMemoryMB<<20)
}

// A deployment limit no run could start with is refused by New, not left to
// fail every run as INTERNAL.
func TestNew_limitsNoRunCanUse(t *testing.T) {
	reg := registry.New()
	for _, tt := range []struct {
		memory int64
		ok     bool
	}{
		{0, true},
		{1 << 20, false},
		{api.MinMemoryBytes - 1, false},
		{api.MinMemoryBytes, true},
		{api.MinMemoryBytes + 1, true},
		{4 << 30, true},
		{4<<30 + 1, false},
		{-1, false},
	} {
		_, err := executor.New(reg, executor.NewConfig().WithLimits(api.Limits{MemoryBytes: tt.memory}))
		if tt.ok {
			require.NoError(t, err, tt.memory)
			continue
		}
		require.Error(t, err, tt.memory)
		require.ErrorContains(t, err, "memory limit", tt.memory)
	}
}
