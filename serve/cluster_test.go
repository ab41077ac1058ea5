package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
	"github.com/ptcx/ptcx/serve/store/storetest"
)

// newNodes serves n nodes of one cluster on a fresh embedded NATS server,
// named n1..nN, with a 1 s lease; edit changes node i's config first.
func newNodes(t *testing.T, n int, edit func(i int, c *serve.Config)) []*testServer {
	t.Helper()
	return newNodesOn(t, storetest.NATS(t, nil), n, edit)
}

// newNodesOn is newNodes on the NATS server ns.
func newNodesOn(t *testing.T, ns *server.Server, n int, edit func(i int, c *serve.Config)) []*testServer {
	t.Helper()
	out := make([]*testServer, n)
	for i := range n {
		out[i] = newServer(t, func(c *serve.Config) {
			c.Store = &serve.StoreConfig{Kind: "nats", URL: ns.ClientURL()}
			c.Node = "n" + string(rune('1'+i))
			c.Lease = "1s"
			if edit != nil {
				edit(i, c)
			}
		})
	}
	return out
}

const askTwice = `const a = await tools.ask({q: "name?"}); const b = await tools.ask({q: "age?"}); return a + ":" + b`

func pendingOn(t *testing.T, c *client.Client, code string) *serve.ExecutionState {
	t.Helper()
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: code, ClientTools: []serve.ClientTool{askTool}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)
	return st
}

func answer(id, v string) serve.ToolResult {
	return serve.ToolResult{ID: id, OK: true, Value: json.RawMessage(`"` + v + `"`)}
}

func TestCluster_anyNodeContinuesAnExecution(t *testing.T) {
	nodes := newNodes(t, 3, nil)
	c1, c2, c3 := nodes[0].client(keyA), nodes[1].client(keyA), nodes[2].client(keyA)
	st := pendingOn(t, c1, askTwice)

	// Node 2 reads the record node 1 parked before answering.
	got, err := c2.Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, got.Status)
	require.Equal(t, st.Pending, got.Pending)

	// Node 3 streams the events node 1 publishes, from the start.
	var wg sync.WaitGroup
	var events []serve.Event
	var evErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		events, evErr = c3.Events(ctx(t), st.ID, 0)
	}()

	// Results posted to node 2 reach the owner, node 1.
	next, err := c2.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, next.Status)
	require.JSONEq(t, `{"q":"age?"}`, string(next.Pending[0].Arguments))
	done, err := c3.ToolResults(ctx(t), st.ID, answer(next.Pending[0].ID, "36"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"ada:36"`, string(done.Value))

	wg.Wait()
	require.NoError(t, evErr)
	var types []string
	for i, e := range events {
		require.Equal(t, i+1, e.ID, "events in order, none lost")
		types = append(types, e.Type)
	}
	require.Equal(t, []string{
		serve.EventPending, serve.EventResult, serve.EventCallStarted, serve.EventCallFinished,
		serve.EventPending, serve.EventResult, serve.EventCallStarted, serve.EventCallFinished, serve.EventDone,
	}, types)

	// Resumption with Last-Event-ID on yet another node.
	rest, err := c2.Events(ctx(t), st.ID, 7)
	require.NoError(t, err)
	require.Len(t, rest, 2)
	require.Equal(t, 8, rest[0].ID)
	require.Equal(t, serve.EventDone, rest[1].Type)

	// Every node answers GET with the settled state.
	for _, c := range []*client.Client{c1, c2, c3} {
		got, err := c.Get(ctx(t), st.ID, false)
		require.NoError(t, err)
		require.Equal(t, serve.StatusCompleted, got.Status)
		require.JSONEq(t, `"ada:36"`, string(got.Value))
	}
}

func TestCluster_otherTenantSeesNothing(t *testing.T) {
	nodes := newNodes(t, 2, nil)
	st := pendingOn(t, nodes[0].client(keyA), askTwice)
	b := nodes[1].client(keyB)
	_, err := b.Get(ctx(t), st.ID, false)
	require.Equal(t, http.StatusNotFound, apiErr(t, err).Status)
	_, err = b.Cancel(ctx(t), st.ID)
	require.Equal(t, http.StatusNotFound, apiErr(t, err).Status)
	_, err = b.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "x"))
	require.Equal(t, http.StatusNotFound, apiErr(t, err).Status)
	_, err = b.Events(ctx(t), st.ID, 0)
	require.Equal(t, http.StatusNotFound, apiErr(t, err).Status)
	_, err = nodes[1].client(keyA).Get(ctx(t), "ex_000000000000000000000000", false)
	require.Equal(t, http.StatusNotFound, apiErr(t, err).Status)
}

func TestCluster_cancelFromAnotherNode(t *testing.T) {
	nodes := newNodes(t, 3, nil)
	st := pendingOn(t, nodes[0].client(keyA), askTwice)
	got, err := nodes[1].client(keyA).Cancel(ctx(t), st.ID)
	require.NoError(t, err)
	require.Equal(t, serve.StatusFailed, got.Status)
	require.Eventually(t, func() bool {
		g, err := nodes[2].client(keyA).Get(ctx(t), st.ID, false)
		return err == nil && g.Status == serve.StatusFailed
	}, 10*time.Second, 50*time.Millisecond)
	_, err = nodes[2].client(keyA).Cancel(ctx(t), st.ID)
	require.Equal(t, http.StatusConflict, apiErr(t, err).Status)
	events, err := nodes[2].client(keyA).Events(ctx(t), st.ID, 0)
	require.NoError(t, err, "the stream from another node ends: the done event of an execution cancelled while parked is published")
	require.Equal(t, serve.EventDone, events[len(events)-1].Type)
}

func TestCluster_overflowQueue(t *testing.T) {
	nodes := newNodes(t, 2, func(i int, c *serve.Config) {
		c.Overflow = true
		if i == 0 {
			c.Server.MaxExecutions = 1
		}
	})
	c1 := nodes[0].client(keyA)
	holder := pendingOn(t, c1, askTwice) // node 1's only slot
	const n = 5
	ids := make([]string, n)
	for i := range n {
		st, err := c1.Execute(ctx(t), serve.ExecutionRequest{Code: `return ` + strconv.Itoa(i) + ` * 10`})
		require.NoError(t, err)
		require.Equal(t, serve.StatusRunning, st.Status, "queued: no slot on node 1")
		ids[i] = st.ID
	}
	for i, id := range ids {
		got, err := c1.Get(ctx(t), id, true)
		require.NoError(t, err)
		require.Equal(t, serve.StatusCompleted, got.Status, "%+v", got.Error)
		require.JSONEq(t, strconv.Itoa(i*10), string(got.Value))
	}
	_, err := c1.Cancel(ctx(t), holder.ID)
	require.NoError(t, err)
}

func TestCluster_storeErrors(t *testing.T) {
	ns := storetest.NATS(t, nil)
	url := ns.ClientURL()
	ns.Shutdown()
	ns.WaitForShutdown()
	cfg := &serve.Config{Listen: "127.0.0.1:0", Store: &serve.StoreConfig{Kind: "nats", URL: url},
		Tenants: []serve.TenantConfig{{Name: "a", KeySHA256: sum(keyA)}}}
	_, err := serve.New(context.Background(), cfg, serve.Options{Runtime: testkit.Sandbox(t)})
	require.ErrorContains(t, err, "cannot reach the NATS server")

	bound := storetest.NATS(t, nil)
	cfg.Store = &serve.StoreConfig{Kind: "nats", URL: bound.ClientURL(), BindOnly: true}
	_, err = serve.New(context.Background(), cfg, serve.Options{Runtime: testkit.Sandbox(t)})
	require.ErrorContains(t, err, `bucket "ptcx_executions" does not exist`)
}

func TestCluster_readyzReflectsTheStore(t *testing.T) {
	ns := storetest.NATS(t, nil)
	ts := newServer(t, func(c *serve.Config) {
		c.Store = &serve.StoreConfig{Kind: "nats", URL: ns.ClientURL()}
		c.Lease = "1s"
	})
	code, _, _ := raw(t, "GET", ts.url+"/readyz", "", "")
	require.Equal(t, http.StatusOK, code)
	ns.Shutdown()
	ns.WaitForShutdown()
	require.Eventually(t, func() bool {
		code, body, _ := raw(t, "GET", ts.url+"/readyz", "", "")
		return code == http.StatusServiceUnavailable && strings.Contains(body, serve.CodeStoreUnavailable) && strings.Contains(body, "not connected")
	}, 10*time.Second, 50*time.Millisecond)
}

// An execution evicted over max_retained is gone at once on its node,
// although its record's deletion is still waiting; then the record goes.
func TestCluster_evictedIsGoneBeforeItsRecord(t *testing.T) {
	n := newNodes(t, 1, func(_ int, c *serve.Config) { c.Server.MaxRetained = 1 })[0]
	c := n.client(keyA)
	release := serve.HoldEvictions(n.srv)
	t.Cleanup(release) // before the server's close, which waits for the deletions
	first, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
	require.NoError(t, err)
	require.Eventually(t, func() bool { ok, _ := serve.InStore(n.srv, first.ID); return ok }, 5*time.Second, 10*time.Millisecond,
		"the settled record is written")
	second, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `return 2`})
	require.NoError(t, err)
	_, err = c.Get(ctx(t), first.ID, false)
	require.Equal(t, 404, apiErr(t, err).Status, "evicted, while its record still waits to be deleted")
	ok, err := serve.InStore(n.srv, first.ID)
	require.NoError(t, err)
	require.True(t, ok, "the deletion is held")
	_, err = c.Get(ctx(t), second.ID, false)
	require.NoError(t, err)
	release()
	require.Eventually(t, func() bool { ok, err := serve.InStore(n.srv, first.ID); return err == nil && !ok }, 5*time.Second, 10*time.Millisecond,
		"released, the record is deleted")
	_, err = c.Get(ctx(t), first.ID, false)
	require.Equal(t, 404, apiErr(t, err).Status)
}
