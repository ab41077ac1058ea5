package wasmhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// gated is a Dispatcher whose calls wait until release is closed.
type gated struct {
	started chan struct{} // one token per call dispatched
	release chan struct{}
}

func newGated() *gated {
	return &gated{started: make(chan struct{}, 100), release: make(chan struct{})}
}

func (g *gated) Dispatch(_ string, _ json.RawMessage, done func(wasmhost.CallResult)) {
	g.started <- struct{}{}
	go func() {
		<-g.release
		done(wasmhost.CallResult{OK: true, Value: json.RawMessage(`1`)})
	}()
}

// runAsync starts a run waiting on a gated call and returns its error
// channel.
func runAsync(rt *wasmhost.Runtime, g *gated, limits api.Limits) <-chan error {
	errc := make(chan error, 1)
	go func() {
		_, err := rt.Run(context.Background(), wasmhost.Program{JS: `return await tools.wait()`, Tools: []string{"wait"}, Limits: limits}, g)
		errc <- err
	}()
	return errc
}

// eventually waits for cond, for a few seconds at most.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, time.Millisecond, what)
}

func TestRuntime_Run_maxRuns(t *testing.T) {
	rt := newRuntime(t, testConfig().WithMaxRuns(2))
	g := newGated()
	// At the cap: two runs admitted, both waiting on their tools.
	a, b := runAsync(rt, g, api.Limits{}), runAsync(rt, g, api.Limits{})
	<-g.started
	<-g.started
	require.Equal(t, 2, rt.Usage().Runs)
	// started is signalled from inside the export that made the call: the
	// slot is given back when that export returns.
	eventually(t, "runs waiting on tools hold no slot", func() bool { return rt.Usage().Executing == 0 })
	// Past it: the third waits, then proceeds when one ends.
	c := runAsync(rt, g, api.Limits{})
	eventually(t, "the third run waits", func() bool { return rt.Usage().Waiting == 1 })
	require.Equal(t, 2, rt.Usage().Runs)
	close(g.release)
	for _, errc := range []<-chan error{a, b, c} {
		require.NoError(t, <-errc)
	}
	require.Equal(t, wasmhost.Usage{MaxRuns: 2, MaxCommittedBytes: rt.Usage().MaxCommittedBytes, Slots: rt.Usage().Slots}, rt.Usage(),
		"every counter is back to zero")
}

func TestRuntime_Run_busyAfterTheAdmissionWait(t *testing.T) {
	tests := []struct {
		name    string
		cfg     wasmhost.Config
		limits  api.Limits
		atLeast time.Duration
	}{
		{"the admission wait", testConfig().WithMaxRuns(1).WithAdmissionWait(100 * time.Millisecond), api.Limits{}, 100 * time.Millisecond},
		{"no wait", testConfig().WithMaxRuns(1).WithAdmissionWait(0), api.Limits{}, 0},
		{"the wall deadline first", testConfig().WithMaxRuns(1), api.Limits{WallTime: 150 * time.Millisecond}, 150 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t, tt.cfg)
			g := newGated()
			a := runAsync(rt, g, api.Limits{})
			<-g.started
			start := time.Now()
			out, err := rt.Run(context.Background(), wasmhost.Program{JS: `return 1`, Limits: tt.limits}, &tools{})
			require.ErrorIs(t, err, wasmhost.ErrBusy)
			require.ErrorContains(t, err, "1 runs are admitted (the cap is 1)")
			require.ErrorContains(t, err, "retry later")
			var re *wasmhost.RunError
			require.False(t, errors.As(err, &re), "the program did not run")
			require.GreaterOrEqual(t, time.Since(start), tt.atLeast)
			require.Less(t, time.Since(start), tt.atLeast+5*time.Second)
			require.GreaterOrEqual(t, out.Stats.Wall, tt.atLeast)
			require.Equal(t, 0, rt.Usage().Waiting)
			close(g.release)
			require.NoError(t, <-a)
			requireHealthy(t, rt)
		})
	}
}

func TestRuntime_Run_admissionWaitEndsWithTheCaller(t *testing.T) {
	rt := newRuntime(t, testConfig().WithMaxRuns(1))
	g := newGated()
	a := runAsync(rt, g, api.Limits{})
	<-g.started
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := rt.Run(ctx, wasmhost.Program{JS: `return 1`}, &tools{})
		errc <- err
	}()
	eventually(t, "the run waits", func() bool { return rt.Usage().Waiting == 1 })
	cancel()
	err := <-errc
	var re *wasmhost.RunError
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, api.KindAbort, re.Kind)
	require.ErrorIs(t, err, context.Canceled)

	// Close ends a wait too.
	go func() {
		_, err := rt.Run(context.Background(), wasmhost.Program{JS: `return 1`}, &tools{})
		errc <- err
	}()
	eventually(t, "the run waits", func() bool { return rt.Usage().Waiting == 1 })
	require.NoError(t, rt.Close(context.Background()))
	require.ErrorIs(t, <-errc, wasmhost.ErrClosed)
	close(g.release)
	<-a
}

// The committed memory cap holds two runs at a 16 MiB limit: each run is
// admitted with its limit committed, so a third waits, and is admitted when
// one ends; a run asking for less memory fits beside them; and a run that
// grows to its limit is never refused for its neighbours.
func TestRuntime_Run_maxCommittedMemory(t *testing.T) {
	const mib = 1 << 20
	rt := newRuntime(t, testConfig().WithLimits(api.Limits{MemoryBytes: 16 * mib}).
		WithMaxCommittedMemory(36*mib).WithAdmissionWait(100*time.Millisecond))
	hold := func(js string) (*gated, chan error) {
		g := newGated()
		errc := make(chan error, 1)
		go func() {
			_, err := rt.Run(context.Background(), wasmhost.Program{JS: js, Tools: []string{"wait"}}, g)
			errc <- err
		}()
		<-g.started
		return g, errc
	}
	grow := `const a = new Uint8Array(12 << 20); a.fill(1); await tools.wait(); return a.length`
	g1, err1 := hold(grow)
	g2, err2 := hold(grow)
	require.Equal(t, int64(32*mib), rt.Usage().CommittedBytes, "two limits committed")

	_, err := rt.Run(context.Background(), wasmhost.Program{JS: `return 1`}, &tools{})
	require.ErrorIs(t, err, wasmhost.ErrBusy, "past the cap: a third run at the limit does not fit")
	require.ErrorContains(t, err, "with 32 MiB of guest memory committed (the cap is 36 MiB; this run needs 16 MiB)")

	out, re, _ := runJS(t, rt, `return 2`, api.Limits{MemoryBytes: 4 * mib})
	require.Nil(t, re, "below the cap: a run with a lower limit fits beside them")
	require.JSONEq(t, `2`, string(out.Result))

	done := make(chan error, 1)
	go func() {
		_, err := rt.Run(context.Background(), wasmhost.Program{JS: `return 3`}, &tools{})
		done <- err
	}()
	eventually(t, "the third run waits", func() bool { return rt.Usage().Waiting == 1 })
	close(g1.release)
	require.NoError(t, <-err1, "a run that grew is never refused for its neighbours")
	require.NoError(t, <-done, "admitted when a run ended")
	close(g2.release)
	require.NoError(t, <-err2)
	require.Zero(t, rt.Usage().CommittedBytes)
	requireHealthy(t, rt)
}

func TestNew_invalidAdmission(t *testing.T) {
	tests := []struct {
		name string
		cfg  wasmhost.Config
		want string
	}{
		{"negative slots", testConfig().WithGuestSlots(-1), "-1 guest slots"},
		{"negative runs", testConfig().WithMaxRuns(-1), "a cap of -1 runs"},
		{"negative memory", testConfig().WithMaxCommittedMemory(-1), "a cap of -1 bytes"},
		{"memory below the minimum", testConfig().WithMaxCommittedMemory(api.MinMemoryBytes - 1),
			"below the minimum of 4194304 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := wasmhost.New(context.Background(), tt.cfg)
			require.ErrorContains(t, err, tt.want)
		})
	}
	// At the bound: the minimum is a valid cap, which admits a run at the
	// minimum memory limit, and no run with a higher one.
	rt := newRuntime(t, testConfig().WithMaxCommittedMemory(api.MinMemoryBytes).WithAdmissionWait(0).
		WithLimits(api.Limits{MemoryBytes: api.MinMemoryBytes}))
	require.Equal(t, int64(api.MinMemoryBytes), rt.Usage().MaxCommittedBytes)
	out, re, _ := runJS(t, rt, `return new Uint8Array(1 << 20).length`, api.Limits{MemoryBytes: api.MinMemoryBytes})
	require.Nil(t, re)
	require.JSONEq(t, `1048576`, string(out.Result))
	_, err := wasmhost.New(context.Background(), testConfig().WithMaxCommittedMemory(api.MinMemoryBytes))
	require.ErrorContains(t, err, "a cap of 4 MiB of committed memory is below the Runtime's memory limit of 256 MiB")
}

func TestRuntime_Usage_defaults(t *testing.T) {
	u := sharedRuntime(t).Usage()
	require.Positive(t, u.Slots)
	require.Equal(t, wasmhost.DefaultRunsPerSlot*u.Slots, u.MaxRuns)
	require.GreaterOrEqual(t, u.MaxCommittedBytes, int64(api.DefaultMemoryBytes))
}

// Many runs through a Runtime with one slot and few admissions, under
// -race: runs whose tool bodies run inline on the run's goroutine and start
// runs of their own (a nested run needs a slot and an admission while its
// parent waits on it), CPU loops that take turns, runs that fail. Every run
// ends with its expected outcome: nothing deadlocks. (Admission is shared by
// parents and their nested runs: more admissions than parents keep one free
// for a nested run; a parent never holds a slot while it waits.)
func TestRuntime_Run_admissionHammer(t *testing.T) {
	const runs, parents = 40, 10
	rt := newRuntime(t, testConfig().WithGuestSlots(1).WithMaxRuns(parents+2))
	nested := func(d *idler) {
		d.inline = func(ctx context.Context, c heldCall, _ func()) {
			out, err := rt.Run(ctx, wasmhost.Program{JS: `return 7`}, &tools{})
			if err != nil {
				c.done(wasmhost.CallResult{Message: err.Error()})
				return
			}
			c.done(wasmhost.CallResult{OK: true, Value: out.Result})
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for i := range runs {
		wg.Go(func() {
			var (
				js   string
				d    wasmhost.Dispatcher = &tools{}
				want                     = `7`
			)
			switch i % 4 {
			case 0: // a parent: 7 when its call ran inline, {} when flushed
				id := &idler{}
				nested(id)
				js, d, want = `return await tools.echo({})`, id, ""
			case 1: // about 15 ms of CPU under -race: well inside the 100 ms limit
				js, want = spin(50_000), ""
			case 2:
				js = `await tools.slow({ms: 5}); return (await tools.echo({n: 7})).n`
			case 3:
				js, want = `for (;;) {}`, "timeout"
			}
			out, err := rt.Run(context.Background(), wasmhost.Program{JS: js, Tools: []string{"echo", "slow"},
				Limits: api.Limits{ComputeTime: 100 * time.Millisecond}}, d)
			var re *wasmhost.RunError
			switch {
			case want == "timeout" && (!errors.As(err, &re) || re.Kind != api.KindTimeout):
				errs <- fmt.Errorf("run %d: want a timeout, got %v", i, err)
			case want == "timeout":
			case err != nil:
				errs <- fmt.Errorf("run %d: %w", i, err)
			case want != "" && string(out.Result) != want:
				errs <- fmt.Errorf("run %d: result %s, want %s", i, out.Result, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	require.Equal(t, 0, rt.Usage().Runs)
	require.Equal(t, 0, rt.Usage().Executing)
}
