package wasmhost

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	wapi "github.com/tetratelabs/wazero/api"

	"github.com/ptcx/ptcx/wasmhost/internal/engine"
)

// laterDispatcher answers every call after delay, from another goroutine,
// so that the run waits for it in the loop.
type laterDispatcher struct{ delay time.Duration }

func (d laterDispatcher) Dispatch(_ string, args json.RawMessage, done func(CallResult)) {
	time.AfterFunc(d.delay, func() { done(CallResult{OK: true, Value: args}) })
}

// idleDispatcher holds the calls, and Idle answers them after delay on the
// run's goroutine, as the executor's scheduler runs inline the one call a
// program waits on.
type idleDispatcher struct {
	delay time.Duration
	held  []func(CallResult)
}

func (d *idleDispatcher) Dispatch(_ string, _ json.RawMessage, done func(CallResult)) {
	d.held = append(d.held, done)
}

func (d *idleDispatcher) Flush() {
	for _, done := range d.held {
		done(CallResult{OK: true, Value: json.RawMessage("2")})
	}
	d.held = d.held[:0]
}

func (d *idleDispatcher) Idle(context.Context, func()) {
	time.Sleep(d.delay)
	d.Flush()
}

// A run that waits longer than releaseAfter drops the call engines of the
// exports it will not call again (parking), wherever it waits; one that
// settles without waiting keeps them for its recycled instance's next run
// (one that waits less is TestParking_release_onlyWhileWaiting's, without
// timing). Either way the recycled instance serves the next
// run, binding what it needs again. Releasable exports are wazero's (a
// wasmtime instance's functions hold no stack of their own), so the test
// names its engine: make test-wasmtime, which sets PTCX_ENGINE, runs it on
// wazero too.
func TestRun_parking_releasesAfterALongWait(t *testing.T) {
	long := 100 * releaseAfter // generous: the timer fires within it on a loaded machine
	tests := []struct {
		name     string
		js       string
		disp     func() Dispatcher
		released bool
	}{
		{"settles at once", "return 2", func() Dispatcher { return laterDispatcher{} }, false},
		{"waits long in the loop", "return await tools.echo(2)", func() Dispatcher { return laterDispatcher{long} }, true},
		{"waits long in Idle", "return await tools.echo(2)", func() Dispatcher { return &idleDispatcher{delay: long} }, true},
		{"waits long on its second call", "await tools.echo(1); return await tools.echo(2)",
			func() Dispatcher { return &idleDispatcher{delay: long} }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			rt, err := New(ctx, NewConfig().WithEngine(EngineWazero).WithPool(2))
			require.NoError(t, err)
			defer func() { require.NoError(t, rt.Close(ctx)) }()
			p := Program{JS: tt.js, Tools: []string{"echo"}}
			for run := range 3 { // the second and third on the recycled instance
				out, err := rt.Run(ctx, p, tt.disp())
				require.NoError(t, err, "run %d", run)
				require.JSONEq(t, "2", string(out.Result))
				inst := recycledIdle(t, rt)
				ok, released := engine.Released(inst.start)
				require.True(t, ok, "ptcx_start is releasable, bound (%T)", inst.start)
				require.Equal(t, tt.released, released, "ptcx_start's call engine dropped")
				if ok, released := engine.Released(inst.load); ok {
					require.Equal(t, tt.released, released, "ptcx_load's call engine dropped")
				}
				resume, _ := engine.Released(inst.resume)
				require.False(t, resume, "ptcx_resume is never released")
			}
		})
	}
}

// The timer releases nothing while the run does not wait, nor once it
// ended; a timer that fired while the run computed is armed again at its
// next wait.
func TestParking_release_onlyWhileWaiting(t *testing.T) {
	mod := &heldFunction{}
	inst := &instance{}
	inst.start = &testReleasable{f: mod}
	r := &run{inst: inst}
	p := &r.parking
	// The test calls release itself: the timer park arms must not fire
	// too (2 ms is short on a loaded machine), so it is one that does
	// nothing.
	p.timer = time.AfterFunc(time.Hour, func() {})
	p.timer.Stop()

	p.release() // never parked: nothing to release
	require.NotNil(t, inst.start.(*testReleasable).f)

	r.park()
	r.unpark()
	p.release() // fired while the run computed
	require.NotNil(t, inst.start.(*testReleasable).f, "not released: the run did not wait")
	require.True(t, p.fired)

	r.park() // arms the timer again
	require.False(t, p.fired)
	p.release()
	require.Nil(t, inst.start.(*testReleasable).f, "released while waiting")
	r.unpark()

	inst.start.(*testReleasable).f = mod
	r.park()
	p.end()
	p.release()
	require.NotNil(t, inst.start.(*testReleasable).f, "the run ended: nothing is released")
}

// heldFunction is a wazero function that is only held, never called.
type heldFunction struct{ wapi.Function }

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

// testReleasable is a releasable export over f, as the wazero engine's are.
type testReleasable struct{ f engine.Func }

func (o *testReleasable) CallWithStack(ctx context.Context, stack []uint64) error {
	return o.f.CallWithStack(ctx, stack)
}

func (o *testReleasable) Release() { o.f = nil }
