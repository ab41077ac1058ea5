package wasmhost_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// With one slot, a long computation takes turns with the guests that wait
// for the slot: short programs started while it computes finish long before
// it does, and no more than one guest ever executes.
func TestRuntime_Run_guestSlotsTakeTurns(t *testing.T) {
	rt := newRuntime(t, testConfig().WithGuestSlots(1))
	calib := sharedRuntime(t)
	n, _ := calibrate(t, calib, 500*time.Millisecond)

	var most atomic.Int64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if e := int64(rt.Usage().Executing); e > most.Load() {
				most.Store(e)
			}
		}
	})

	long := make(chan time.Time, 1)
	go func() {
		_, err := rt.Run(context.Background(), wasmhost.Program{JS: spin(n)}, &tools{})
		require.NoError(t, err)
		long <- time.Now()
	}()
	require.Eventually(t, func() bool { return rt.Usage().Executing == 1 }, 10*time.Second, time.Millisecond)
	var short sync.WaitGroup
	var lastShort atomic.Int64
	for range 3 {
		short.Go(func() {
			out, re, _ := runJS(t, rt, `return (await tools.echo({n: 1})).n`, api.Limits{})
			require.Nil(t, re)
			require.JSONEq(t, `1`, string(out.Result))
			lastShort.Store(time.Now().UnixNano())
		})
	}
	short.Wait()
	longEnded := <-long
	close(stop)
	sampler.Wait()
	require.Less(t, lastShort.Load(), longEnded.UnixNano(), "the short programs waited for the long one to end")
	require.Equal(t, int64(1), most.Load(), "one slot, one guest executing at a time")
}

// A tool body run inline on the run's goroutine (IdleDispatcher.Idle) runs
// between exports: the run holds no slot meanwhile, so the body can start a
// run of its own on a Runtime with a single slot.
func TestRuntime_Run_inlineToolBodyHoldsNoSlot(t *testing.T) {
	rt := newRuntime(t, testConfig().WithGuestSlots(1))
	var executing atomic.Int64
	executing.Store(-1)
	d := &idler{inline: func(ctx context.Context, c heldCall, _ func()) {
		executing.Store(int64(rt.Usage().Executing))
		out, err := rt.Run(ctx, wasmhost.Program{JS: `return 6 * 7`}, &tools{})
		if err != nil {
			c.done(wasmhost.CallResult{Message: err.Error()})
			return
		}
		c.done(wasmhost.CallResult{OK: true, Value: out.Result})
	}}
	out, err := runIdler(t, rt, d, `return await tools.echo({})`, api.Limits{})
	require.NoError(t, err)
	require.JSONEq(t, `42`, string(out.Result))
	require.Zero(t, executing.Load(), "no guest held a slot while the tool body ran")
}

// With one slot, four long computations of tenant a, and then one twice as
// long of tenant b: the slot goes round the tenants, so b's gets every
// other quantum and ends while a's, which share the rest, are about half
// done. Were the turns first come first served (all in one tenant), the
// late one would get a fifth of the slot and be less than half done when
// the others end. The late one does twice the work so that each verdict
// has a margin of about two: with equal work, the one-tenant order was
// decided by the early ones' lead of about one quantum in thirty, and a
// slow stretch of the VM flipped it (CI, on wasmtime).
func TestRuntime_Run_tenantsTakeTurns(t *testing.T) {
	calib := sharedRuntime(t)
	n, _ := calibrate(t, calib, 300*time.Millisecond)
	for _, tc := range []struct {
		name          string
		early, late   string
		lateEndsFirst bool
	}{
		{"two tenants", "a", "b", true},
		{"one tenant", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRuntime(t, testConfig().WithGuestSlots(1))
			order := make(chan string, 5)
			runSpin := func(tenant, name string, n int) {
				_, err := rt.Run(context.Background(), wasmhost.Program{JS: spin(n), Tenant: tenant}, &tools{})
				require.NoError(t, err)
				order <- name
			}
			for range 4 {
				go runSpin(tc.early, "early", n)
			}
			require.Eventually(t, func() bool { u := rt.Usage(); return u.Executing == 1 && u.WaitingForSlot == 3 },
				10*time.Second, time.Millisecond)
			time.Sleep(50 * time.Millisecond) // the early ones have computed for a few quanta
			go runSpin(tc.late, "late", 2*n)
			first := <-order
			for range 4 {
				<-order
			}
			if tc.lateEndsFirst {
				require.Equal(t, "late", first, "the other tenant's computation had half the slot")
			} else {
				require.Equal(t, "early", first, "the late computation had a fifth of the slot")
			}
		})
	}
}
