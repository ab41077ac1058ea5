package serve_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// TestServer_handles: with server.handle_over_bytes, a large result reaches
// the program as a handle; a handle in the result is a placeholder in the
// execution's value and text, listed without its value, and resolved by
// GET /v1/executions/{id}/handles/{handle} for its tenant only.
func TestServer_handles(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Server.HandleOverBytes = 200 })
	a, b := ts.client(keyA), ts.client(keyB)
	doc := strings.Repeat("classified ", 20)
	st, err := a.Execute(ctx(t), serve.ExecutionRequest{Code: `await tools.write({path: "doc.txt", content: "` + doc + `"});
		const h = await tools.read({path: "doc.txt"}); return {doc: h, size: h.size}`})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status, "%+v", st.Error)
	require.NotContains(t, string(st.Value), "classified")
	require.NotContains(t, st.Text, "classified")
	require.Len(t, st.Handles, 1)
	h := st.Handles[0]
	require.Equal(t, "read", h.Tool)
	require.Contains(t, string(st.Value), h.ID)

	got, err := a.Handle(ctx(t), st.ID, h.ID)
	require.NoError(t, err)
	require.Equal(t, h.ID, got.ID)
	require.Equal(t, h.Size, got.Size)
	require.Equal(t, len(got.Value), got.Size)
	require.Contains(t, string(got.Value), "classified")

	_, err = b.Handle(ctx(t), st.ID, h.ID)
	require.Equal(t, 404, apiErr(t, err).Status, "another tenant's execution")
	_, err = a.Handle(ctx(t), st.ID, "h_0123")
	require.Equal(t, 404, apiErr(t, err).Status, "a handle the result does not hold")
	_, err = a.Handle(ctx(t), "no-such-execution", h.ID)
	require.Equal(t, 404, apiErr(t, err).Status)
	status, _, _ := raw(t, "GET", ts.url+"/v1/executions/"+st.ID+"/handles/"+h.ID, "", "")
	require.Equal(t, 401, status)

	// A result under the size is a value, as without the setting.
	st, err = a.Execute(ctx(t), serve.ExecutionRequest{Code: `await tools.write({path: "s.txt", content: "short"}); return await tools.read({path: "s.txt"})`})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status, "%+v", st.Error)
	require.Contains(t, string(st.Value), "short")
	require.Empty(t, st.Handles)
}

func TestConfig_handleOverBytesNegative(t *testing.T) {
	_, err := serve.ParseConfig([]byte("listen: 127.0.0.1:0\nserver: {handle_over_bytes: -1}\ntenants: [{name: a, key_sha256: " + sum(keyA) + "}]\n"))
	require.ErrorContains(t, err, "server.handle_over_bytes: -1 is negative")
	c, err := serve.ParseConfig([]byte("listen: 127.0.0.1:0\nserver: {handle_over_bytes: 4096}\ntenants: [{name: a, key_sha256: " + sum(keyA) + "}]\n"))
	require.NoError(t, err)
	require.Equal(t, 4096, c.Server.HandleOverBytes)
}
