package serve_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// fetchTool is a client tool whose answers reach the program as handles.
var fetchTool = serve.ClientTool{
	Name: "fetch", Description: "Fetch a document.", Handle: true,
	InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`),
}

// handleProgram fetches a document by a client tool declared handle: true,
// passes the handle to another client tool (ask) and to a server tool
// (write), and returns it.
const handleProgram = `const h = await tools.fetch({url: "https://corp.test/q3"});
const r = await tools.ask({q: h});
await tools.write({path: "copy.txt", content: h});
return {h, r, size: h.size}`

var classified = strings.Repeat("classified ", 8)

// TestServer_clientToolHandle: the answer to a client tool declared
// "handle": true reaches the program as a handle, whose value stays on
// the server across parking (from memory, from spilled bytes, and from a
// dir store's bytes after a restart): passed to another client tool, the
// client is asked with the value; passed to a server tool, the tool gets
// it; in the result it is a placeholder, and GET
// /v1/executions/{id}/handles/{handle} gives the value.
func TestServer_clientToolHandle(t *testing.T) {
	dir := t.TempDir()
	withDir := func(node string) func(*serve.Config) {
		return func(c *serve.Config) {
			c.Store = &serve.StoreConfig{Kind: "dir", Path: dir}
			c.Node, c.Lease = node, "1s"
		}
	}
	for _, tt := range []struct {
		name  string
		first func(*serve.Config)
		then  func(before *testServer) *testServer // the server the second answer goes to
		after func(now *testServer) *testServer    // a server that did not run it, or nil
	}{
		{"from memory", nil, nil, nil},
		{"from spilled bytes", func(c *serve.Config) { c.Server.ParkGraceMS = -1 }, nil, nil},
		{"from a dir store after a restart", withDir("first"), func(before *testServer) *testServer {
			serve.Crash(before.srv)
			return newServer(t, withDir("second"))
		}, func(now *testServer) *testServer {
			serve.Crash(now.srv)
			return newServer(t, withDir("third"))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newServer(t, tt.first)
			c := ts.client(keyA)
			st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: handleProgram, ClientTools: []serve.ClientTool{fetchTool, askTool}})
			require.NoError(t, err)
			require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)
			require.Equal(t, "fetch", st.Pending[0].Name)

			mid := answerOn(t, c, st.ID, answer(st.Pending[0].ID, classified))
			require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
			require.Equal(t, "ask", mid.Pending[0].Name)
			require.JSONEq(t, `{"q":"`+classified+`"}`, string(mid.Pending[0].Arguments), "the client is asked with the handle's value")

			if tt.then != nil {
				ts = tt.then(ts)
				c = ts.client(keyA)
			}
			done := answerOn(t, c, st.ID, answer(mid.Pending[0].ID, "ok"))
			require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
			require.NotContains(t, string(done.Value), "classified")
			require.NotContains(t, done.Text, "classified")
			require.Len(t, done.Handles, 1)
			h := done.Handles[0]
			require.Equal(t, "fetch", h.Tool)
			require.Equal(t, len(classified)+2, h.Size)
			require.Contains(t, string(done.Value), h.ID)

			got, err := c.Handle(ctx(t), st.ID, h.ID)
			require.NoError(t, err)
			require.JSONEq(t, `"`+classified+`"`, string(got.Value))
			_, err = ts.client(keyB).Handle(ctx(t), st.ID, h.ID)
			require.Equal(t, http.StatusNotFound, apiErr(t, err).Status, "another tenant's")

			read, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `return await tools.read({path: "copy.txt"})`})
			require.NoError(t, err)
			require.Equal(t, serve.StatusCompleted, read.Status, "%+v", read.Error)
			require.Contains(t, string(read.Value), classified, "the server tool got the value")

			if tt.after != nil {
				// The node that held the value is gone: the execution's state
				// stays, its handle's value is lost, and the answer says so.
				c = tt.after(ts).client(keyA)
				got, err := c.Get(ctx(t), st.ID, false)
				require.NoError(t, err)
				require.Equal(t, serve.StatusCompleted, got.Status)
				_, err = c.Handle(ctx(t), st.ID, h.ID)
				e := apiErr(t, err)
				require.Equal(t, http.StatusGone, e.Status, "%+v", e.Body)
				require.Equal(t, serve.CodeGone, e.Body.Code)
				require.Contains(t, e.Body.Message, "node second")
			}
		})
	}
}

// A client tool's handle member is a boolean, as in a tools file: any
// other value is a 400 naming it.
func TestServer_clientToolHandle_refusedWhenMalformed(t *testing.T) {
	ts := newServer(t, nil)
	status, body, _ := raw(t, "POST", ts.url+"/v1/executions", keyA,
		`{"code": "return 1", "client_tools": [{"name": "fetch", "description": "x", "input_schema": {"type": "object"}, "handle": "yes"}]}`)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "handle")
}
