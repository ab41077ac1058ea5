package wasmhost

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// laterDispatcher answers every call from another goroutine, so that the
// run waits for it in the loop.
type laterDispatcher struct{}

func (laterDispatcher) Dispatch(_ string, args json.RawMessage, done func(CallResult)) {
	go done(CallResult{OK: true, Value: args})
}

// idleDispatcher holds the calls and answers them inline in Idle, as the
// executor's scheduler runs the one call a program waits on.
type idleDispatcher struct{ held []func(CallResult) }

func (d *idleDispatcher) Dispatch(_ string, _ json.RawMessage, done func(CallResult)) {
	d.held = append(d.held, done)
}

func (d *idleDispatcher) Flush() {
	for _, done := range d.held {
		done(CallResult{OK: true, Value: json.RawMessage("2")})
	}
	d.held = d.held[:0]
}

func (d *idleDispatcher) Idle(context.Context, func()) { d.Flush() }

// A run that waits drops the call engines of the exports it will not call
// again (run.release), wherever it waits; one that settles without waiting
// keeps them for its recycled instance's next run. Either way the
// recycled instance serves the next run, binding what it needs again.
func TestRun_release_whenTheRunWaits(t *testing.T) {
	tests := []struct {
		name     string
		js       string
		disp     func() Dispatcher
		released bool
	}{
		{"settles at once", "return 1", func() Dispatcher { return laterDispatcher{} }, false},
		{"waits in the loop", "return await tools.echo(2)", func() Dispatcher { return laterDispatcher{} }, true},
		{"waits in Idle", "return await tools.echo(2)", func() Dispatcher { return &idleDispatcher{} }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			rt, err := New(ctx, NewConfig().WithPool(2))
			require.NoError(t, err)
			defer func() { require.NoError(t, rt.Close(ctx)) }()
			p := Program{JS: tt.js, Tools: []string{"echo"}}
			for run := range 3 { // the second and third on the recycled instance
				out, err := rt.Run(ctx, p, tt.disp())
				require.NoError(t, err, "run %d", run)
				require.JSONEq(t, map[bool]string{false: "1", true: "2"}[tt.released], string(out.Result))
				inst := recycledIdle(t, rt)
				start, ok := inst.start.(*wazeroReleasable)
				require.True(t, ok, "ptcx_start is releasable, bound (%T)", inst.start)
				require.Equal(t, tt.released, start.f == nil, "ptcx_start's call engine dropped")
				if load, ok := inst.load.(*wazeroReleasable); ok {
					require.Equal(t, tt.released, load.f == nil, "ptcx_load's call engine dropped")
				}
				_, resume := inst.resume.(*wazeroReleasable)
				require.False(t, resume, "ptcx_resume is never released")
			}
		})
	}
}

// recycledIdle returns the pool's last idle instance that served a run.
func recycledIdle(t *testing.T, rt *Runtime) *instance {
	t.Helper()
	rt.pool.mu.Lock()
	defer rt.pool.mu.Unlock()
	for i := len(rt.pool.idle) - 1; i >= 0; i-- {
		if inst := rt.pool.idle[i]; inst.recycled && !inst.cold {
			return inst
		}
	}
	require.FailNow(t, "no hot recycled instance in the pool")
	return nil
}
