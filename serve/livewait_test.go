package serve_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// liveServer serves without a store (a spill directory of its own) with
// live waits of waitMS (server.live_wait_ms); edit changes the config
// after.
func liveServer(t *testing.T, waitMS int64, edit func(*serve.Config)) *testServer {
	t.Helper()
	spill := t.TempDir()
	return newServer(t, func(c *serve.Config) {
		c.Store, c.SpillDir = nil, spill
		c.Server.LiveWaitMS = waitMS
		if edit != nil {
			edit(c)
		}
	})
}

// liveWaits is ptcx_live_waits_total{outcome,tenant="a"}, 0 before it is
// there.
func liveWaits(t *testing.T, ts *testServer, outcome string) float64 {
	t.Helper()
	_, body, _ := raw(t, "GET", ts.url+"/metrics", "", "")
	m := regexp.MustCompile(`(?m)^ptcx_live_waits_total\{outcome="` + outcome + `",tenant="a"\} (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return v
}

// A client that answers within the live wait continues the program in its
// live instance, at each of its two client calls: nothing is parked,
// suspended or written.
func TestServer_liveWait_quickAnswerContinuesLive(t *testing.T) {
	ts := liveServer(t, 60_000, nil) // far longer than the test takes to answer
	c := ts.client(keyA)
	st := pendingOn(t, c, askTwice)
	require.Len(t, st.Pending, 1)
	require.NotNil(t, st.ExpiresAt)
	mid, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	require.NotEqual(t, st.Pending[0].ID, mid.Pending[0].ID)
	done, err := c.ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "36"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
	require.Equal(t, 2, done.Stats.Calls)
	require.Equal(t, 2.0, liveWaits(t, ts, "answered"))
	require.Zero(t, liveWaits(t, ts, "parked"))
	require.NotContains(t, ts.logs.String(), `"msg":"execution parked"`)
	require.Zero(t, gaugeOrZero(t, ts, "ptcx_executions_parked", "a"))
	require.Zero(t, gauge(t, ts, "ptcx_pending_calls", "a"))
	// The events a client streams are those of a park: a pending event per
	// call, a result event per answer.
	evs, err := c.Events(ctx(t), st.ID, 0)
	require.NoError(t, err)
	var kinds []string
	for _, e := range evs {
		if e.Type == serve.EventPending || e.Type == serve.EventResult {
			kinds = append(kinds, e.Type)
		}
	}
	require.Equal(t, []string{serve.EventPending, serve.EventResult, serve.EventPending, serve.EventResult}, kinds)
}

// A client slower than the live wait finds the execution parked, as
// without one, and its answers resume it; the calls keep the ids the
// client was shown while it waited live.
func TestServer_liveWait_slowAnswerParks(t *testing.T) {
	ts := liveServer(t, 1, nil)
	c := ts.client(keyA)
	st := pendingOn(t, c, askTwice)
	require.Eventually(t, func() bool { return gaugeOrZero(t, ts, "ptcx_executions_parked", "a") == 1 }, 10*time.Second, 2*time.Millisecond)
	again, err := c.Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	require.Equal(t, st.Pending, again.Pending, "parked on the calls it waited on live")
	mid, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	require.Eventually(t, func() bool { return liveWaits(t, ts, "parked") == 2 }, 10*time.Second, 2*time.Millisecond)
	done, err := c.ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "36"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
	require.Zero(t, liveWaits(t, ts, "answered"))
	require.Contains(t, ts.logs.String(), `"msg":"execution parked"`)
	require.Zero(t, gauge(t, ts, "ptcx_executions_parked", "a"))
}

// quotas.max_live_waits: below and at it executions wait live; past it
// one parks at once; once they settle, the next waits live again.
func TestServer_liveWait_maxLiveWaits(t *testing.T) {
	ts := liveServer(t, 60_000, func(c *serve.Config) { c.Tenants[0].Quotas.MaxLiveWaits = 2 })
	c := ts.client(keyA)
	const one = `return await tools.ask({q: "n?"})`
	var sts []*serve.ExecutionState
	for i, want := range []float64{0, 0, 1} { // below, at, past
		sts = append(sts, pendingOn(t, c, one))
		require.Equal(t, want, liveWaits(t, ts, "full"), "execution %d", i+1)
		require.Equal(t, want, gaugeOrZero(t, ts, "ptcx_executions_parked", "a"), "execution %d", i+1)
	}
	for i, st := range sts {
		done, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, strconv.Itoa(i)))
		require.NoError(t, err)
		require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
		require.JSONEq(t, strconv.Quote(strconv.Itoa(i)), string(done.Value))
	}
	require.Equal(t, 2.0, liveWaits(t, ts, "answered"))
	st := pendingOn(t, c, one)
	require.Equal(t, 1.0, liveWaits(t, ts, "full"), "the live waits were given back")
	done, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "x"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
}

// A cancelled execution waiting live settles as cancelled, and gives its
// live wait back.
func TestServer_liveWait_cancel(t *testing.T) {
	ts := liveServer(t, 60_000, func(c *serve.Config) { c.Tenants[0].Quotas.MaxLiveWaits = 1 })
	c := ts.client(keyA)
	st := pendingOn(t, c, askTwice)
	got, err := c.Cancel(ctx(t), st.ID)
	require.NoError(t, err)
	require.Equal(t, serve.StatusFailed, got.Status)
	st = pendingOn(t, c, askTwice)
	require.Zero(t, liveWaits(t, ts, "full"), "the cancelled one's live wait was given back")
	_, err = c.Cancel(ctx(t), st.ID)
	require.NoError(t, err)
}

// Hammer: executions answered by two clients at once (each result posted
// twice), with a live wait so short that some are answered live, some
// park, and some are answered as they park: every one completes with its
// own answers, and nothing is left pending or parked.
func TestServer_liveWait_hammer(t *testing.T) {
	ts := liveServer(t, 1, func(c *serve.Config) {
		c.Tenants[0].Quotas.MaxConcurrent, c.Tenants[0].Quotas.MaxPending = 64, 64
	})
	c := ts.client(keyA)
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: askTwice, ClientTools: []serve.ClientTool{askTool}})
				if err != nil {
					return err
				}
				for k := 0; st.Status == serve.StatusPending; k++ {
					id := st.Pending[0].ID
					r := answer(id, fmt.Sprintf("%d.%d", i, k))
					var mu sync.Mutex
					var next *serve.ExecutionState
					var post sync.WaitGroup
					for range 2 {
						post.Add(1)
						go func() {
							defer post.Done()
							got, err := c.ToolResults(ctx(t), st.ID, r)
							if err != nil {
								return
							}
							if got.Status != serve.StatusPending || got.Pending[0].ID != id {
								mu.Lock()
								next = got
								mu.Unlock()
							}
						}()
					}
					post.Wait()
					if next == nil {
						return fmt.Errorf("execution %d: no answer moved it past call %s", i, id)
					}
					st = next
				}
				if st.Status != serve.StatusCompleted || string(st.Value) != fmt.Sprintf(`"%d.0:%d.1"`, i, i) {
					return fmt.Errorf("execution %d: %s %s %+v", i, st.Status, st.Value, st.Error)
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Zero(t, gauge(t, ts, "ptcx_pending_calls", "a"))
	require.Zero(t, gaugeOrZero(t, ts, "ptcx_executions_parked", "a"))
	require.Equal(t, float64(2*n), liveWaits(t, ts, "answered")+liveWaits(t, ts, "parked")+liveWaits(t, ts, "full"))
}

// An execution that waited live and cannot park (its tenant's parked bytes
// are at their quota) goes on waiting live on the same calls: the call id
// the client was shown is still the one to answer.
func TestServer_liveWait_thenLivePastParkedBytes(t *testing.T) {
	ts := liveServer(t, 1, func(c *serve.Config) {
		c.Tenants[0].Quotas.MaxParkedBytes = 1
		c.Server.ParkGraceMS = -1 // parked bytes count once written: at once here
	})
	a := ts.client(keyA)
	slow, err := a.Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 1000)); return await tools.ask({q: "slow"})`,
		ClientTools: []serve.ClientTool{askTool}, Wait: boolp(false)})
	require.NoError(t, err)
	fast := hold(t, ts, keyA, 1)[0]
	require.Eventually(t, func() bool { return gaugeOrZero(t, ts, "ptcx_executions_parked", "a") == 1 }, 10*time.Second, 2*time.Millisecond)

	st, err := a.Get(ctx(t), slow.ID, true)
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status)
	require.Eventually(t, func() bool { return strings.Contains(ts.logs.String(), "execution waits for its client live") }, 10*time.Second, 2*time.Millisecond)
	again, err := a.Get(ctx(t), slow.ID, false)
	require.NoError(t, err)
	require.Equal(t, st.Pending, again.Pending, "the same call, pending live")
	require.Equal(t, 1.0, gauge(t, ts, "ptcx_executions_parked", "a"), "the slow one did not park")
	done, err := a.ToolResults(ctx(t), slow.ID, answer(st.Pending[0].ID, "answered live"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"answered live"`, string(done.Value))

	fs, err := a.Get(ctx(t), fast, false)
	require.NoError(t, err)
	done, err = a.ToolResults(ctx(t), fast, answer(fs.Pending[0].ID, "1"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
}
