package serve_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
	"github.com/ptcx/ptcx/serve/store"
	"github.com/ptcx/ptcx/wasmhost"
)

// answerOn posts one result to c, retrying while the answer is 503 (the
// owner is gone and its lease has not expired yet), for at most 20 s.
func answerOn(t *testing.T, c *client.Client, id string, r serve.ToolResult) *serve.ExecutionState {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := c.ToolResults(ctx(t), id, r)
		if err == nil {
			return st
		}
		e := apiErr(t, err)
		require.Equal(t, http.StatusServiceUnavailable, e.Status, "%+v", e.Body)
		require.Equal(t, serve.CodeOwnerUnavailable, e.Body.Code)
		require.NotEmpty(t, e.RetryAfter)
		require.True(t, time.Now().Before(deadline), "still 503 after 20 s")
		time.Sleep(100 * time.Millisecond)
	}
}

func TestCluster_lostNode_parkedContinueElsewhereRunningFail(t *testing.T) {
	nodes := newNodes(t, 3, nil)
	c1, c2, c3 := nodes[0].client(keyA), nodes[1].client(keyA), nodes[2].client(keyA)
	first := pendingOn(t, c1, askTwice)
	second := pendingOn(t, c1, askTwice)
	// first is answered once on its owner: it parks again, on its second call.
	next, err := c1.ToolResults(ctx(t), first.ID, answer(first.Pending[0].ID, "ada"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, next.Status)
	running, err := c1.Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 30000)); return 1`, Wait: boolp(false)})
	require.NoError(t, err)
	require.Eventually(t, func() bool { // its record is written by the follower
		g, err := c2.Get(ctx(t), running.ID, false)
		return err == nil && g.Status == serve.StatusRunning
	}, 10*time.Second, 20*time.Millisecond)

	serve.Crash(nodes[0].srv) // killed while it owns two parked executions

	// Node 2 completes the first (503 until node 1's lease expires).
	done := answerOn(t, c2, first.ID, answer(next.Pending[0].ID, "36"))
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
	// The second, answered through node 3, continues wherever it was taken over.
	mid := answerOn(t, c3, second.ID, answer(second.Pending[0].ID, "bob"))
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	require.JSONEq(t, `{"q":"age?"}`, string(mid.Pending[0].Arguments))
	done2 := answerOn(t, c2, second.ID, answer(mid.Pending[0].ID, "7"))
	require.Equal(t, serve.StatusCompleted, done2.Status, "%+v", done2.Error)
	require.JSONEq(t, `"bob:7"`, string(done2.Value))

	// The running one was not parked: it is reported failed, retryable.
	require.Eventually(t, func() bool {
		g, err := c3.Get(ctx(t), running.ID, false)
		return err == nil && g.Status == serve.StatusFailed
	}, 15*time.Second, 50*time.Millisecond)
	g, err := c2.Get(ctx(t), running.ID, false)
	require.NoError(t, err)
	require.Equal(t, "NODE_LOST", g.Error.Code)
	require.Contains(t, g.Error.Message, "node n1")

	// Every node answers with the settled states; the streams end with done.
	for _, c := range []*client.Client{c2, c3} {
		got, err := c.Get(ctx(t), first.ID, false)
		require.NoError(t, err)
		require.Equal(t, serve.StatusCompleted, got.Status)
		events, err := c.Events(ctx(t), second.ID, 0)
		require.NoError(t, err)
		require.NotEmpty(t, events)
		require.Equal(t, serve.EventDone, events[len(events)-1].Type)
	}
}

func TestCluster_takeOver_racingNodesOneWins(t *testing.T) {
	nodes := newNodes(t, 3, nil)
	st := pendingOn(t, nodes[0].client(keyA), askTwice)
	serve.Crash(nodes[0].srv)

	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, n := range nodes[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = serve.TakeOverFrom(n.srv, st.ID, "n1")
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		require.True(t, errors.Is(err, store.ErrConflict), "the loser sees a revision conflict: %v", err)
	}
	require.Equal(t, 1, won, "exactly one node claims the execution: %v", errs)
	require.NotEqual(t, serve.Holds(nodes[1].srv, st.ID), serve.Holds(nodes[2].srv, st.ID), "exactly one node holds it")

	// Results posted to either node reach the winner, which resumes it once.
	mid, err := nodes[1].client(keyA).ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	done, err := nodes[2].client(keyA).ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "36"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
}

// TestServer_restart_dirStoreKeepsPendingExecutions stops a server (drain
// and close, as SIGTERM does) holding parked executions and starts another
// on the same directory: they are still pending, and complete with the
// right values when their results come.
func TestServer_restart_dirStoreKeepsPendingExecutions(t *testing.T) {
	for _, tt := range []struct {
		name string
		stop func(*serve.Server)
	}{
		{"drained", func(s *serve.Server) {
			rep := s.Drain(context.Background())
			require.Len(t, rep.Parked, 2, "the pending executions are reported parked")
			require.Empty(t, rep.Cancelled)
			require.NoError(t, s.Close(context.Background()))
		}},
		{"killed", serve.Crash},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			withDir := func(node string) func(*serve.Config) {
				return func(c *serve.Config) {
					c.Store = &serve.StoreConfig{Kind: "dir", Path: dir}
					c.Node, c.Lease = node, "1s"
				}
			}
			before := newServer(t, withDir("first"))
			c := before.client(keyA)
			kept, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `return "kept"`})
			require.NoError(t, err)
			one := pendingOn(t, c, askTwice)
			two := pendingOn(t, c, `try { return await tools.ask({q: "late?"}) } catch (e) { return "expired: " + e.code }`)
			tt.stop(before.srv)

			after := newServer(t, withDir("second"))
			c = after.client(keyA)
			got, err := c.Get(ctx(t), kept.ID, false)
			require.NoError(t, err)
			require.JSONEq(t, `"kept"`, string(got.Value))
			got, err = c.Get(ctx(t), one.ID, false)
			require.NoError(t, err)
			require.Equal(t, serve.StatusPending, got.Status)
			require.Equal(t, one.Pending, got.Pending)
			require.Equal(t, one.ExpiresAt.UnixNano(), got.ExpiresAt.UnixNano(), "its expiry stands")

			mid, err := c.ToolResults(ctx(t), one.ID, answer(one.Pending[0].ID, "ada"))
			require.NoError(t, err)
			require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
			done, err := c.ToolResults(ctx(t), one.ID, answer(mid.Pending[0].ID, "36"))
			require.NoError(t, err)
			require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
			require.JSONEq(t, `"ada:36"`, string(done.Value))

			done, err = c.ToolResults(ctx(t), two.ID, answer(two.Pending[0].ID, "yes"))
			require.NoError(t, err)
			require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
			require.JSONEq(t, `"yes"`, string(done.Value))
		})
	}
}

func TestServer_park_expiresAfterARestart(t *testing.T) {
	dir := t.TempDir()
	withDir := func(node string) func(*serve.Config) {
		return func(c *serve.Config) {
			c.Store = &serve.StoreConfig{Kind: "dir", Path: dir}
			c.Node, c.Lease = node, "1s"
			c.Tenants[0].Quotas.PendingTimeoutMS = 3000
		}
	}
	before := newServer(t, withDir("first"))
	st := pendingOn(t, before.client(keyA), `try { return await tools.ask({q: "late?"}) } catch (e) { return "expired: " + e.code }`)
	require.NoError(t, before.srv.Close(context.Background()))

	after := newServer(t, withDir("second"))
	got, err := after.client(keyA).Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	require.NotEqual(t, serve.StatusFailed, got.Status, "%+v", got.Error) // pending, or past its expiry already on a loaded machine
	require.Eventually(t, func() bool {
		g, err := after.client(keyA).Get(ctx(t), st.ID, false)
		return err == nil && g.Status == serve.StatusCompleted
	}, 20*time.Second, 50*time.Millisecond, "its call expires at expires_at, here too")
	got, err = after.client(keyA).Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	require.JSONEq(t, `"expired: TOOL_TIMEOUT"`, string(got.Value))
}

func TestServer_park_holdsNoInstanceNorGoroutine(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Tenants[0].Quotas = serve.Quotas{MaxConcurrent: 2, MaxPending: 100} })
	c := ts.client(keyA)
	pendingOn(t, c, askTwice) // warm: connections, pools
	base := runtime.NumGoroutine()
	const n = 30
	ids := make([]*serve.ExecutionState, n)
	for i := range n { // more than max_concurrent: parked ones hold no slot
		ids[i] = pendingOn(t, c, askTwice)
	}
	// A request's goroutines end just after its answer: wait for them, on a
	// loaded machine too; a parked execution's would never end.
	require.Eventually(t, func() bool { return runtime.NumGoroutine()-base < n/2 }, 10*time.Second, 10*time.Millisecond,
		"a parked execution holds no goroutine")
	require.Eventually(t, func() bool { // an execution parks just after its pending call is shown
		_, body, _ := raw(t, "GET", ts.url+"/metrics", "", "")
		return strings.Contains(body, `ptcx_executions_parked{tenant="a"} 31`)
	}, 10*time.Second, 10*time.Millisecond, "every pending execution parks")
	for i, st := range ids[:3] {
		mid, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "x"))
		require.NoError(t, err)
		done, err := c.ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, strconv.Itoa(i)))
		require.NoError(t, err)
		require.JSONEq(t, `"x:`+strconv.Itoa(i)+`"`, string(done.Value))
	}
}

func TestServer_park_resumesWithinMaxConcurrent(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Tenants[0].Quotas = serve.Quotas{MaxConcurrent: 1, MaxPending: 10} })
	c := ts.client(keyA)
	st := pendingOn(t, c, `return await tools.ask({q: "x"})`)
	busy, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 30000))`, Wait: boolp(false)})
	require.NoError(t, err, "the parked execution holds no concurrent slot")

	_, err = c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "kept"))
	e := apiErr(t, err)
	require.Equal(t, http.StatusTooManyRequests, e.Status, "its resume needs a slot")
	require.Equal(t, serve.ReasonMaxConcurrent, e.Body.Reason)
	got, err := c.Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, got.Status, "still parked, its result kept")
	require.Empty(t, got.Pending)

	_, err = c.Cancel(ctx(t), busy.ID)
	require.NoError(t, err)
	done, err := c.ToolResults(ctx(t), st.ID) // no results: a retry
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"kept"`, string(done.Value))
}

func TestServer_park_partialResultsWaitForTheRest(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	st := pendingOn(t, c, `const [a, b] = await Promise.all([tools.ask({q: "a"}), tools.ask({q: "b"})]); return a + b`)
	require.Len(t, st.Pending, 2)
	mid, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[1].ID, "B"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status)
	require.Equal(t, st.Pending[:1], mid.Pending, "the answered call left; the other waits")
	again, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[1].ID, "ignored"))
	require.NoError(t, err, "a repeated id is a no-op")
	require.Equal(t, serve.StatusPending, again.Status)
	done, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "A"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"AB"`, string(done.Value))
}

func TestServer_park_cancelWhileParked(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	st := pendingOn(t, c, askTwice)
	got, err := c.Cancel(ctx(t), st.ID)
	require.NoError(t, err)
	require.Equal(t, serve.StatusFailed, got.Status)
	require.Equal(t, "CODE_RUN_FAILED", got.Error.Code)
	_, err = c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "late"))
	require.NoError(t, err, "a result after the end is a no-op")
	_, body, _ := raw(t, "GET", ts.url+"/metrics", "", "")
	require.Contains(t, body, `ptcx_executions_parked{tenant="a"} 0`)
	require.Contains(t, body, `ptcx_executions_live{tenant="a"} 0`)
}

// TestServer_Serve_sigtermLeavesParkedExecutionsForTheNextStart is the
// restart through Serve, as `ptcx serve` runs it: the context ends (SIGTERM),
// the drain leaves the parked executions in the dir store, and a server
// started on the same directory completes them.
func TestServer_Serve_sigtermLeavesParkedExecutionsForTheNextStart(t *testing.T) {
	dir := t.TempDir()
	cfg := &serve.Config{Listen: "127.0.0.1:0", Server: serve.ServerLimits{DrainTimeoutMS: 10000},
		Store:   &serve.StoreConfig{Kind: "dir", Path: dir},
		Tenants: []serve.TenantConfig{{Name: "a", KeySHA256: sum(keyA)}}}
	logs := &lockedBuffer{}
	srv, err := serve.New(context.Background(), cfg, serve.Options{Runtime: testkit.Sandbox(t), Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, l) }()
	c := client.New("http://"+l.Addr().String(), keyA, nil)
	st := pendingOn(t, c, askTwice)
	running, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 300)); return "done"`, Wait: boolp(false)})
	require.NoError(t, err)
	stop()
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return within 30 s of its context ending")
	}
	require.NoError(t, srv.Close(context.Background()))
	require.Contains(t, logs.String(), `"msg":"drained","completed":1,"cancelled":0,"parked":1`)
	require.Contains(t, logs.String(), `"msg":"execution left parked by drain: resumable after a restart or on another node","execution":"`+st.ID+`"`)

	next := newServer(t, func(c *serve.Config) { c.Store = &serve.StoreConfig{Kind: "dir", Path: dir} })
	c = next.client(keyA)
	got, err := c.Get(ctx(t), running.ID, false)
	require.NoError(t, err)
	require.JSONEq(t, `"done"`, string(got.Value), "the running execution finished within the drain")
	got, err = c.Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, got.Status)
	mid, err := c.ToolResults(ctx(t), st.ID, answer(got.Pending[0].ID, "ada"))
	require.NoError(t, err)
	done, err := c.ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "36"))
	require.NoError(t, err)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
}

// TestServer_clientTool_besideAServerCallWaitsLive: a client tool called
// while a server-side call is in flight cannot be parked (it is
// dispatched at once): it waits live, and still completes.
func TestServer_clientTool_besideAServerCallWaitsLive(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	st := pendingOn(t, c, `const [a, l] = await Promise.all([tools.ask({q: "x"}), tools.list({})]); return a`)
	_, body, _ := raw(t, "GET", ts.url+"/metrics", "", "")
	require.NotContains(t, body, `ptcx_executions_parked{tenant="a"} 1`, "not parked")
	require.Contains(t, body, `ptcx_pending_calls{tenant="a"} 1`, "waiting live")
	done, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "live"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"live"`, string(done.Value))
}

// TestServer_park_resumeBusyKeepsItParked resumes on a sandbox whose one
// run another execution holds: 503 BUSY, nothing ran, and the execution
// stays parked with its result; once there is room, the retry completes
// it with the right value. With PTCX_TEST_STORE it runs on each store.
func TestServer_park_resumeBusyKeepsItParked(t *testing.T) {
	rt, err := wasmhost.New(context.Background(), wasmhost.NewConfig().WithMaxRuns(1).WithAdmissionWait(0))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })
	ts := newServerOn(t, rt, func(c *serve.Config) {
		c.Server.ParkGraceMS = -1 // its bytes written at once, as this test reads them
	})
	c := ts.client(keyA)
	st := pendingOn(t, c, askTwice)
	blocker, err := ts.client(keyB).Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 30000))`, Wait: boolp(false)})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return rt.Usage().Runs == 1 }, 10*time.Second, 10*time.Millisecond, "the blocker holds the one run")

	_, err = c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
	e := apiErr(t, err)
	require.Equal(t, http.StatusServiceUnavailable, e.Status, "%+v", e.Body)
	require.Equal(t, "BUSY", e.Body.Code)
	require.NotEmpty(t, e.RetryAfter)
	require.Contains(t, e.Body.Message, "it is still parked")
	got, err := c.Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, got.Status, "%+v", got.Error)
	require.Empty(t, got.Pending, "its result is kept")

	_, err = ts.client(keyB).Cancel(ctx(t), blocker.ID)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return rt.Usage().Runs == 0 }, 10*time.Second, 10*time.Millisecond)
	mid, err := c.ToolResults(ctx(t), st.ID) // the retry, with no results
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	require.JSONEq(t, `{"q":"age?"}`, string(mid.Pending[0].Arguments))
	done, err := c.ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "36"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
	_, body, _ := raw(t, "GET", ts.url+"/metrics", "", "")
	require.Contains(t, body, `ptcx_executions_parked{tenant="a"} 0`)
}
