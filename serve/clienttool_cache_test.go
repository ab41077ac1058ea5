package serve_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// A tenant keeps an executor per client tools declaration, the most
// recently used within the bound (below, at, past it the oldest is
// forgotten); an execution whose declaration was forgotten builds it
// again, and each execution's client calls reach only that execution.
func TestServer_clientExecutors_bound(t *testing.T) {
	defer serve.SetMaxClientExecutors(2)()
	ts := liveServer(t, -1, nil)
	c := ts.client(keyA)
	tool := func(n int) serve.ClientTool {
		return serve.ClientTool{Name: "ask" + strconv.Itoa(n), Description: "Ask.", InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	run := func(n int) {
		t.Helper()
		name := "ask" + strconv.Itoa(n)
		st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `return await tools.` + name + `({})`, ClientTools: []serve.ClientTool{tool(n)}})
		require.NoError(t, err)
		require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)
		require.Equal(t, name, st.Pending[0].Name)
		done, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, st.ID))
		require.NoError(t, err)
		require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
		require.JSONEq(t, strconv.Quote(st.ID), string(done.Value), "its own answer")
	}
	for n, want := range []int{1, 2, 2} { // below, at, past the bound
		run(n)
		require.Equal(t, want, serve.ClientExecutors(ts.srv, "a"), "after declaration %d", n)
	}
	run(0) // forgotten: built again
	run(2) // kept
	require.Equal(t, 2, serve.ClientExecutors(ts.srv, "a"))
	require.Zero(t, serve.ClientExecutors(ts.srv, "b"), "another tenant's are its own")
}
