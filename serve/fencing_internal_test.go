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
	"github.com/ptcx/ptcx/serve/internal/fence"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

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

// Every lease the config allows leaves two renewals before the owner
// stops acting.
func TestMargin_leavesTwoRenewalsBeforeTheLimitOfEachLease(t *testing.T) {
	for _, lease := range []time.Duration{MinLease, 3 * time.Second, DefaultLease, MaxLease} {
		t.Run(lease.String(), func(t *testing.T) {
			m := fence.Margin(lease)
			require.Equal(t, lease/5, m)
			require.Greater(t, lease-m, 2*lease/3, "the renewals at lease/3 and 2·lease/3 both start before the owner stops")
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
	f := fence.New("n1", time.Second, clock.now, func(uint64) {})
	f.Stop() // no watchdog: the test moves the clock
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
		return ex.Execute(fence.WithTicket(context.Background(), f, epoch), executor.Call{Name: registry.RunCode, Args: []byte(`{"code":` + quote(code) + `}`)})
	}
	f.Renewed(t0)
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
	direct := nex.Execute(fence.WithTicket(context.Background(), f, 1), executor.Call{Name: "effect", Args: []byte(`{}`)})
	require.Equal(t, api.CodeDenied, direct.Err.Code)
	require.Equal(t, ran, bodies.Load())

	// Renewed: the ended epoch stays refused; new work runs.
	clock.set(t0.Add(2 * time.Second))
	f.Renewed(t0.Add(2 * time.Second))
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
