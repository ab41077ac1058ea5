package serve_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
	"github.com/ptcx/ptcx/serve/store/storetest"
)

// TestCluster_handles: a handle's value lives on the node that ran its
// execution; any other node reads it from there (in chunks: the value is
// larger than a NATS message here), also after a parked execution moved to
// another node; once the node holding it is gone, another node answers
// 410 GONE naming it, not a bare 404.
func TestCluster_handles(t *testing.T) {
	ns := storetest.NATS(t, func(o *storetest.Options) { o.MaxPayload = 256 << 10 })
	nodes := newNodesOn(t, ns, 3, nil)
	c1, c2, c3 := nodes[0].client(keyA), nodes[1].client(keyA), nodes[2].client(keyA)

	big, err := c1.Execute(ctx(t), serve.ExecutionRequest{Code: `return await tools.fetch({url: "https://corp.test/big"})`,
		ClientTools: []serve.ClientTool{fetchTool}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, big.Status, "%+v", big.Error)
	big, err = c1.ToolResults(ctx(t), big.ID, answer(big.Pending[0].ID, strings.Repeat("0123456789", 60000)))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, big.Status, "%+v", big.Error)
	require.Len(t, big.Handles, 1)
	h := big.Handles[0]
	own, err := c1.Handle(ctx(t), big.ID, h.ID)
	require.NoError(t, err)
	require.Greater(t, len(own.Value), 600000, "over two NATS messages")
	for _, c := range []*client.Client{c2, c3} {
		got, err := c.Handle(ctx(t), big.ID, h.ID)
		require.NoError(t, err)
		require.Equal(t, own, got, "read from the node that holds it")
	}
	_, err = nodes[1].client(keyB).Handle(ctx(t), big.ID, h.ID)
	require.Equal(t, http.StatusNotFound, apiErr(t, err).Status, "another tenant's execution")
	_, err = c2.Handle(ctx(t), big.ID, "h_0123")
	require.Equal(t, http.StatusNotFound, apiErr(t, err).Status, "no such handle: the owner says so")
	require.Contains(t, apiErr(t, err).Body.Message, "holds no handle")

	// A client tool's handle, its execution parked on node 1 and answered
	// through node 2, then taken over after node 1 is lost.
	st, err := c1.Execute(ctx(t), serve.ExecutionRequest{Code: `const h = await tools.fetch({url: "https://corp.test/q3"});
		const r = await tools.ask({q: h}); return {h, r}`, ClientTools: []serve.ClientTool{fetchTool, askTool}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)
	mid, err := c2.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, classified))
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	require.JSONEq(t, `{"q":"`+classified+`"}`, string(mid.Pending[0].Arguments))

	serve.Crash(nodes[0].srv)

	done := answerOn(t, c3, st.ID, answer(mid.Pending[0].ID, "ok"))
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.Len(t, done.Handles, 1)
	for _, c := range []*client.Client{c2, c3} {
		got, err := c.Handle(ctx(t), st.ID, done.Handles[0].ID)
		require.NoError(t, err, "the node that took it over holds its handles, from its parked bytes")
		require.JSONEq(t, `"`+classified+`"`, string(got.Value))
		require.Equal(t, "fetch", got.Tool)
	}

	// Node 1 is gone, and the big handle's value with it.
	var e *client.Error
	require.Eventually(t, func() bool {
		_, err := c2.Handle(ctx(t), big.ID, h.ID)
		e = apiErr(t, err)
		if e.Status == http.StatusServiceUnavailable {
			require.Equal(t, serve.CodeOwnerUnavailable, e.Body.Code, "until its lease expires")
			require.NotEmpty(t, e.RetryAfter)
			return false
		}
		return true
	}, 20*time.Second, 100*time.Millisecond)
	require.Equal(t, http.StatusGone, e.Status, "%+v", e.Body)
	require.Equal(t, serve.CodeGone, e.Body.Code)
	require.Contains(t, e.Body.Message, "node n1")
	require.Contains(t, e.Body.Message, "value is lost")
	got, err := c3.Get(ctx(t), big.ID, false)
	require.NoError(t, err, "the execution's state stays")
	require.Equal(t, serve.StatusCompleted, got.Status)

	// An execution that has not completed holds no handles to read.
	pending, err := c2.Execute(ctx(t), serve.ExecutionRequest{Code: `return await tools.ask({q: "x"})`, ClientTools: []serve.ClientTool{askTool}})
	require.NoError(t, err)
	_, err = c3.Handle(ctx(t), pending.ID, h.ID)
	require.Equal(t, http.StatusNotFound, apiErr(t, err).Status)
	require.Contains(t, apiErr(t, err).Body.Message, "it is pending")
}
