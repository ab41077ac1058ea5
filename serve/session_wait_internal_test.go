package serve

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve/store"
)

// A request whose context ends while it waits for a busy session's turn
// gets the conflict that made it wait, or DRAINING when the server drains,
// and gives its place in the queue back.
func TestProgramSessions_claimAs_requestEndsWhileWaiting(t *testing.T) {
	for _, draining := range []bool{false, true} {
		for _, op := range []sessionOp{opRun, opDelete} {
			ps := &programSessions{st: store.NewMemory(), node: "n1",
				alive:    func(context.Context, string) (bool, error) { return false, nil },
				draining: func() bool { return draining },
				turns:    map[string]*sessionTurn{}, held: map[string]heldSession{}}
			tn := &tenant{name: "a", state: sessionTenant{wait: time.Minute, ttl: time.Hour, max: 10}}
			key := sessionKeyOf("a", "", "s")
			busy := ps.turn(key)
			busy <- struct{}{} // another program runs in the session

			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			c, herr := ps.claimAs(ctx, op, tn, "", "s")
			require.Nil(t, c)
			require.NotNil(t, herr)
			if draining {
				require.Equal(t, http.StatusServiceUnavailable, herr.Status)
				require.Equal(t, CodeDraining, herr.Body.Code)
				require.Contains(t, herr.Body.Message, "draining")
			} else {
				require.Equal(t, http.StatusConflict, herr.Status)
				require.Equal(t, CodeConflict, herr.Body.Code)
				require.Contains(t, herr.Body.Message, `the request ended while it waited for session "s"`)
			}
			want := map[sessionOp]string{opRun: "nothing ran", opDelete: "nothing was deleted"}[op]
			require.Contains(t, herr.Body.Message, want)

			<-busy
			ps.releaseTurn(key)
			ps.mu.Lock()
			require.Empty(t, ps.turns, "the waiter gave its reference back")
			ps.mu.Unlock()
		}
	}
}
