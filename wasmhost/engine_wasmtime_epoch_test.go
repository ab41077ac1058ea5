//go:build wasmtime

package wasmhost

import (
	"context"
	"testing"
	"time"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

// The store pointer read from wasmtime-go's Store is the store whose
// context wasmtime-go exports (the layout check of storePtr).
func TestStorePtr_matchesTheContext(t *testing.T) {
	inst := newCallTestInstance(t)
	p, ok := storePtr(inst.store)
	require.True(t, ok)
	require.NotNil(t, p)
}

// The ticker counts the exports in progress, whatever their end: back to
// zero after runs that return, throw, and are stopped at their compute
// limit at an epoch deadline, so that it sleeps between them.
func TestEpochTicker_running_backToZero(t *testing.T) {
	ctx := context.Background()
	rt, err := New(ctx, NewConfig().WithEngine(EngineWasmtime))
	require.NoError(t, err)
	defer rt.Close(ctx)
	core, err := wasmtimeShared()
	require.NoError(t, err)
	tests := []struct {
		name string
		js   string
		kind api.Kind // "" for success
	}{
		{"a result", `return 1`, ""},
		{"a throw", `throw new Error("no")`, api.KindException},
		{"stopped at its compute limit", `for (;;) {}`, api.KindTimeout},
		{"stopped inside a native built-in", `return new Float64Array(2e7).sort().length`, api.KindTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rt.Run(ctx, Program{JS: tt.js, Limits: api.Limits{ComputeTime: 50 * time.Millisecond}}, DispatcherFunc(nil))
			if tt.kind == "" {
				require.NoError(t, err)
			} else {
				var re *RunError
				require.ErrorAs(t, err, &re)
				require.Equal(t, tt.kind, re.Kind, re.Message)
				require.NotErrorIs(t, re, ErrAbandoned)
			}
			require.Zero(t, core.ticker.running.Load())
		})
	}
}

// The ticker sleeps from the start, wakes at the first export, goes on
// while exports run and for epochLinger ticks after the last, then sleeps
// again until the next one wakes it.
func TestEpochTicker_sleepsWhenIdle(t *testing.T) {
	tk := newEpochTicker(wasmtime.NewEngine())
	require.True(t, tk.asleep.Load())
	for round := range 2 {
		tk.enter()
		require.False(t, tk.asleep.Load(), "round %d: an export wakes it", round)
		time.Sleep(3 * epochLinger * epochTick)
		require.False(t, tk.asleep.Load(), "round %d: it ticks while an export runs", round)
		tk.leave()
		require.Eventually(t, tk.asleep.Load, 5*time.Second, epochTick, "round %d: it sleeps after the last export", round)
	}
	require.Zero(t, tk.running.Load())
}
