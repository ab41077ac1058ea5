package wasmhost_test

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/wasmhost"
)

// goroutineID is the calling goroutine's number, from its stack's header
// ("goroutine 7 [running]:").
func goroutineID() string {
	var buf [64]byte
	return strings.Fields(string(buf[:runtime.Stack(buf[:], false)]))[1]
}

// Every Idle gets a loan of its own, whether it comes from the start of a
// slab, its end or the next one (below, at and past wasmhost.LoanSlab
// awaited calls): a late handover of a loan given back, called as the next
// Idle runs, changes nothing (a loan reused would hand the run over to a
// new goroutine), and the run ends on its own goroutine with the right
// answer.
func TestIdle_staleHandoverAcrossLoanSlabs(t *testing.T) {
	rt := sharedRuntime(t)
	for _, calls := range []int{wasmhost.LoanSlab - 1, wasmhost.LoanSlab, wasmhost.LoanSlab + 1, 2*wasmhost.LoanSlab + 1} {
		var earlier []func()
		var driver string
		moved := 0 // the first Idle called from another goroutine than the first's
		d := &idler{inline: func(_ context.Context, c heldCall, handover func()) {
			if driver == "" {
				driver = goroutineID()
			}
			if id := goroutineID(); id != driver && moved == 0 {
				moved = len(earlier) + 1
			}
			for _, h := range earlier {
				h() // each was given back: a no-op
			}
			earlier = append(earlier, handover)
			c.done(wasmhost.CallResult{OK: true, Value: c.args})
		}}
		runtime.GC()
		before := runtime.NumGoroutine()
		out, err := runIdler(t, rt, d, `let s = 0; for (let i = 0; i < `+strconv.Itoa(calls)+`; i++) s += (await tools.echo({i})).i; return s`, api.Limits{})
		require.NoError(t, err, "%d calls", calls)
		require.JSONEq(t, strconv.Itoa(calls*(calls-1)/2), string(out.Result), "%d calls", calls)
		require.Len(t, earlier, calls, "each call went to Idle")
		require.Zero(t, moved, "Idle %d of %d was called from another goroutine: the run was handed over", moved, calls)
		for _, h := range earlier {
			h() // after the run too
		}
		testkit.WaitGoroutines(t, before, 5*time.Second)
	}
	requireHealthy(t, rt)
}
