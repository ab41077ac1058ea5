package serve

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/serve/store"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// testFence is a fence of a 1 s lease on clock, without its watchdog
// timer (the test calls expire), recording the epochs that lapsed.
func testFence(clock *fakeClock) (*fence, func() []uint64) {
	var mu sync.Mutex
	var lapsed []uint64
	f := newFence("n1", time.Second, clock.now, func(e uint64) {
		mu.Lock()
		defer mu.Unlock()
		lapsed = append(lapsed, e)
	})
	f.watch = false
	return f, func() []uint64 {
		mu.Lock()
		defer mu.Unlock()
		return append([]uint64(nil), lapsed...)
	}
}

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func TestFence_holds_aroundLeaseMinusMargin(t *testing.T) {
	clock := &fakeClock{t: t0}
	f, _ := testFence(clock)
	require.False(t, f.holds(1), "no renewal yet")
	require.Equal(t, 800*time.Millisecond, f.limit(), "lease − margin, the margin a fifth of the lease")
	f.renewed(t0)
	tests := []struct {
		name  string
		after time.Duration
		holds bool
	}{
		{"just renewed", 0, true},
		{"below lease − margin", 800*time.Millisecond - time.Nanosecond, true},
		{"at lease − margin", 800 * time.Millisecond, false},
		{"past lease − margin", 800*time.Millisecond + time.Nanosecond, false},
		{"past the lease", 1200 * time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock.set(t0.Add(tt.after))
			require.Equal(t, tt.holds, f.holds(1))
			_, live := f.epoch()
			require.Equal(t, tt.holds, live)
			require.False(t, f.holds(2), "another epoch never holds")
		})
	}
}

func TestFence_renewed_beforeTheLimitKeepsTheEpoch(t *testing.T) {
	clock := &fakeClock{t: t0}
	f, lapsed := testFence(clock)
	f.renewed(t0)
	start := t0.Add(333 * time.Millisecond)
	clock.set(start.Add(400 * time.Millisecond)) // landed at 733 ms, below the limit
	f.renewed(start)
	clock.set(t0.Add(1100 * time.Millisecond)) // past the first renewal's limit, below the second's
	require.True(t, f.holds(1))
	require.Empty(t, lapsed())
}

func TestFence_renewed_lateRenewalEndsTheEpoch(t *testing.T) {
	clock := &fakeClock{t: t0}
	f, lapsed := testFence(clock)
	f.renewed(t0)
	// Stopped for 5 s: the first renewal after that starts and lands late.
	start := t0.Add(5 * time.Second)
	clock.set(start.Add(10 * time.Millisecond))
	f.renewed(start)
	require.Equal(t, []uint64{1}, lapsed(), "epoch 1 ended")
	require.False(t, f.holds(1), "what ran under the ended epoch never acts again")
	require.True(t, f.holds(2), "new work runs under the next epoch")
	e, live := f.epoch()
	require.True(t, live)
	require.Equal(t, uint64(2), e)
}

func TestFence_renewed_landedPastTheLimitProvesNothing(t *testing.T) {
	clock := &fakeClock{t: t0}
	f, lapsed := testFence(clock)
	f.renewed(t0)
	start := t0.Add(700 * time.Millisecond)
	clock.set(start.Add(900 * time.Millisecond)) // the write took 900 ms: its until may be past already
	f.renewed(start)
	require.Equal(t, []uint64{1}, lapsed(), "the lease lapsed before it landed")
	_, live := f.epoch()
	require.False(t, live, "a renewal that landed past lease − margin proves nothing")
	require.False(t, f.holds(2))
}

func TestFence_expire_endsTheEpochOnce(t *testing.T) {
	clock := &fakeClock{t: t0}
	f, lapsed := testFence(clock)
	f.renewed(t0)
	clock.set(t0.Add(799 * time.Millisecond))
	f.expire()
	require.Empty(t, lapsed(), "below the limit the watchdog does nothing")
	clock.set(t0.Add(800 * time.Millisecond))
	f.expire()
	f.expire()
	require.Equal(t, []uint64{1}, lapsed(), "the epoch ends once")
	require.Contains(t, f.refusal(), "node n1 cannot prove its cluster lease is current")

	start := t0.Add(time.Second)
	clock.set(start)
	f.renewed(start)
	require.Equal(t, []uint64{1}, lapsed(), "a renewal after the watchdog ends nothing more")
	require.True(t, f.holds(2))
	require.False(t, f.holds(1))
}

func TestFenceMargin_leavesTwoRenewalsBeforeTheLimit(t *testing.T) {
	for _, lease := range []time.Duration{MinLease, 3 * time.Second, DefaultLease, MaxLease} {
		t.Run(lease.String(), func(t *testing.T) {
			m := fenceMargin(lease)
			require.Equal(t, lease/5, m)
			require.Greater(t, lease-m, 2*lease/3, "the renewals at lease/3 and 2·lease/3 both start before the owner stops")
		})
	}
}

func TestCluster_gone_onlyPastLeasePlusMargin(t *testing.T) {
	c := &cluster{fence: newFence("n1", time.Second, time.Now, func(uint64) {})}
	l := store.Lease{Node: "n2", Until: t0}
	tests := []struct {
		name string
		at   time.Duration
		gone bool
	}{
		{"at its until", 0, false},
		{"below until + margin", 200*time.Millisecond - time.Nanosecond, false},
		{"at until + margin", 200 * time.Millisecond, false},
		{"past until + margin", 200*time.Millisecond + time.Nanosecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.gone, c.gone(l, t0.Add(tt.at)))
		})
	}
}

// A nested call of an execution whose epoch ended is refused DENIED
// before its body runs, on each path the executor dispatches by: the
// inline path (the program awaits one call), the sequencer (concurrent
// calls, an exclusive one), and a call made directly.
func TestFence_guard_refusesCallsOfAnEndedEpoch(t *testing.T) {
	rt := testkit.Sandbox(t)
	clock := &fakeClock{t: t0}
	f, _ := testFence(clock)
	var bodies atomic.Int64
	body := func(context.Context, api.Input) (api.Output, error) {
		bodies.Add(1)
		return api.Output{Value: []byte(`1`)}, nil
	}
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "effect", Description: "A side effect.", ConcurrencySafe: true, Body: body}))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "exclusive", Description: "A side effect, alone.", Body: body}))
	s := &Server{}
	ex, err := executor.New(reg, executor.NewConfig().WithRuntime(rt).WithGuard("", s.fenceGuard))
	require.NoError(t, err)

	programs := []struct{ name, code string }{
		{"inline", `return await tools.effect({})`},
		{"concurrent", `const [a, b] = await Promise.all([tools.effect({}), tools.effect({})]); return a + b`},
		{"exclusive", `await tools.effect({}); return await tools.exclusive({})`},
	}
	run := func(epoch uint64, code string) api.Result {
		return ex.Execute(withTicket(context.Background(), f, epoch), executor.Call{Name: registry.RunCode, Args: []byte(`{"code":` + quote(code) + `}`)})
	}
	f.renewed(t0)
	for _, p := range programs {
		r := run(1, p.code)
		require.True(t, r.OK(), "%s while the lease holds: %v", p.name, r.Err)
	}
	ran := bodies.Load()
	require.Equal(t, int64(5), ran)

	clock.set(t0.Add(800 * time.Millisecond)) // lease − margin: this node stops acting
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			r := run(1, p.code)
			require.False(t, r.OK())
			require.Contains(t, r.Err.Message, "cannot prove its cluster lease is current")
			require.Equal(t, ran, bodies.Load(), "no body ran")
		})
	}
	// A call made directly (native mode: the tools are the model's).
	native := registry.New()
	require.NoError(t, native.DeclareMode(registry.Deployment, api.ModeNative))
	require.NoError(t, native.Register(registry.Deployment, registry.Tool{Name: "effect", Description: "A side effect.", Body: body}))
	nex, err := executor.New(native, executor.NewConfig().WithRuntime(rt).WithGuard("", s.fenceGuard))
	require.NoError(t, err)
	direct := nex.Execute(withTicket(context.Background(), f, 1), executor.Call{Name: "effect", Args: []byte(`{}`)})
	require.Equal(t, api.CodeDenied, direct.Err.Code)
	require.Equal(t, ran, bodies.Load())

	// Renewed: the ended epoch stays refused; new work runs.
	clock.set(t0.Add(2 * time.Second))
	f.renewed(t0.Add(2 * time.Second))
	r := run(1, programs[0].code)
	require.False(t, r.OK(), "an execution of the ended epoch stays stopped")
	require.Equal(t, ran, bodies.Load())
	require.True(t, run(2, programs[0].code).OK())
	require.Equal(t, ran+1, bodies.Load())
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Checks race renewals, lapses and the watchdog: an epoch, once seen
// ended, never holds again, and the current one holds only while proven.
func TestFence_holds_hammer(t *testing.T) {
	clock := &fakeClock{t: t0}
	f, _ := testFence(clock)
	f.renewed(t0)
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 8 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				cur, _ := f.epoch()
				for e := uint64(1); e < cur; e++ {
					if f.holds(e) {
						t.Errorf("epoch %d holds after epoch %d began", e, cur)
						return
					}
				}
			}
		}()
	}
	now := t0
	for i := range 2000 {
		switch i % 4 {
		case 0, 1: // renewals in time
			now = now.Add(300 * time.Millisecond)
			clock.set(now)
			f.renewed(now)
		case 2: // stopped past the limit: the watchdog notices
			now = now.Add(time.Second)
			clock.set(now)
			f.expire()
		case 3: // a renewal lands after the lapse
			f.renewed(now)
		}
	}
	close(stop)
	readers.Wait()
	e, live := f.epoch()
	require.True(t, live)
	require.Equal(t, uint64(501), e, "one epoch ended per lapse")
}
