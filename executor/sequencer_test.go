package executor_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
)

// The sequencer goroutine starts with the first call handed to it: a
// program that makes no call, or only calls that run inline, starts none.
func TestScheduler_sequencer_startsWithTheFirstHandedCall(t *testing.T) {
	tests := []struct {
		name   string
		code   string
		starts int64
	}{
		{"no call", `return 1`, 0},
		{"sequential awaits, all inline", `let t = 0; for (const id of [1, 2]) t += await tools.score({id}); return t`, 0},
		{"a fan-out", `return await Promise.all([1, 2, 3].map((id) => tools.score({id})))`, 1},
		{"a call not awaited, abandoned at settlement", `tools.score({id: 1}); return 1`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, api.ModePTC)
			e := w.executor(t, executor.NewConfig())
			var starts atomic.Int64
			t.Cleanup(executor.SetSequencerHook(func() { starts.Add(1) }))
			r := runProgram(e, tt.code)
			require.True(t, r.OK(), r.Text)
			require.Equal(t, tt.starts, starts.Load())
		})
	}
}
