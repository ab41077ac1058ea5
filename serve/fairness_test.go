package serve_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
	"github.com/ptcx/ptcx/wasmhost"
)

// spinProgram computes for a time that grows with n.
func spinProgram(n int) string {
	return `let x = 0; for (let i = 0; i < ` + strconv.Itoa(n) + `; i++) x = (x + i * 7) % 1000003; return x`
}

// The noisy neighbour, in the order the guest slot serves the tenants:
// with one slot, tenant a floods four long CPU-bound executions, then
// tenant b starts one as long. The slot goes round the tenants (each
// tenant's executions carry its name as their fairness key), so b's has
// every other quantum and completes before any of a's, which share the
// rest; served first come first served, it would have had a fifth of the
// slot and completed last. (TestServer_load reports the latency ratio.)
func TestServer_noisyNeighbourTakesTurns(t *testing.T) {
	testkit.RequireGuest(t)
	rt, err := wasmhost.New(context.Background(), wasmhost.NewConfig().WithGuestSlots(1))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })

	// About 300 ms of computation, however fast the machine is now.
	n := 1_000_000
	for {
		out, err := rt.Run(context.Background(), wasmhost.Program{JS: spinProgram(n)}, wasmhost.DispatcherFunc(nil))
		require.NoError(t, err)
		if c := out.Stats.Compute; c >= 100*time.Millisecond {
			n = int(float64(n) * float64(300*time.Millisecond) / float64(c))
			break
		}
		n *= 4
	}

	ts := newServerOn(t, rt, func(c *serve.Config) {
		c.Tenants[0].Quotas = serve.Quotas{MaxConcurrent: 8, MaxPending: 8}
	})
	lctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, b := client.New(ts.url, keyA, nil), client.New(ts.url, keyB, nil)
	cpu := loadKind{"cpu", serve.ExecutionRequest{Code: spinProgram(n)}, serve.StatusCompleted, false}
	order := make(chan string, 5)
	execute := func(c *client.Client, name string) {
		_, err := runOne(lctx, c, cpu)
		if err != nil {
			name += ": " + err.Error()
		}
		order <- name
	}
	for range 4 {
		go execute(a, "a")
	}
	require.Eventually(t, func() bool { u := rt.Usage(); return u.Executing == 1 && u.WaitingForSlot == 3 },
		20*time.Second, time.Millisecond, "tenant a's four executions compute, one at a time")
	time.Sleep(50 * time.Millisecond) // a's have computed for a few quanta
	go execute(b, "b")
	got := make([]string, 0, 5)
	for range 5 {
		select {
		case name := <-order:
			got = append(got, name)
		case <-lctx.Done():
			t.Fatalf("executions did not complete in time: %v", got)
		}
	}
	require.Equal(t, []string{"b", "a", "a", "a", "a"}, got, "tenant b's execution had half the slot, not a fifth")
}
