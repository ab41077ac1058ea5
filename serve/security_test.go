package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

func TestServer_auth_rejects(t *testing.T) {
	ts := newServer(t, nil)
	tests := []struct{ name, key string }{{"no key", ""}, {"wrong key", "not-a-key"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range [][2]string{{"POST", "/v1/executions"}, {"POST", "/v1/calls"}, {"GET", "/v1/tools"}, {"POST", "/mcp"}} {
				status, body, _ := raw(t, r[0], ts.url+r[1], tt.key, `{"code":"return 1"}`)
				require.Equal(t, 401, status, r[1])
				require.Contains(t, body, `"code":"UNAUTHORIZED"`)
			}
		})
	}
}

func TestServer_tenantIsolation(t *testing.T) {
	ts := newServer(t, nil)
	a, b := ts.client(keyA), ts.client(keyB)
	st, err := a.Execute(ctx(t), serve.ExecutionRequest{Code: `return await tools.ask({q: "x"})`, ClientTools: []serve.ClientTool{askTool}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status)

	_, err = b.Get(ctx(t), st.ID, false)
	require.Equal(t, 404, apiErr(t, err).Status)
	_, err = b.Cancel(ctx(t), st.ID)
	require.Equal(t, 404, apiErr(t, err).Status)
	_, err = b.ToolResults(ctx(t), st.ID, serve.ToolResult{ID: st.Pending[0].ID, OK: true, Value: json.RawMessage(`"stolen"`)})
	require.Equal(t, 404, apiErr(t, err).Status)
	_, err = b.Events(ctx(t), st.ID, 0)
	require.Equal(t, 404, apiErr(t, err).Status)

	done, err := a.ToolResults(ctx(t), st.ID, serve.ToolResult{ID: st.Pending[0].ID, OK: true, Value: json.RawMessage(`"mine"`)})
	require.NoError(t, err)
	require.JSONEq(t, `"mine"`, string(done.Value), "tenant b's attempts changed nothing")
}

func TestServer_workspacePerTenant(t *testing.T) {
	ts := newServer(t, nil)
	st, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: `await tools.write({path: "secret.txt", content: "a's"}); return 1`})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status, "%+v", st.Error)
	st, err = ts.client(keyB).Execute(ctx(t), serve.ExecutionRequest{Code: `try { return await tools.read({path: "secret.txt"}) } catch (e) { return "none" }`})
	require.NoError(t, err)
	require.JSONEq(t, `"none"`, string(st.Value), "tenant b's workspace is its own")
}

func TestServer_keysNeverLogged(t *testing.T) {
	ts := newServer(t, nil)
	_, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: `return "secret-program-text"`})
	require.NoError(t, err)
	raw(t, "GET", ts.url+"/v1/tools", "wrong-key-xyz", "")
	require.Eventually(t, func() bool { return strings.Contains(ts.logs.String(), "execution settled") }, 10e9, 10e6, "the logs are written")
	logs := ts.logs.String()
	for _, secret := range []string{keyA, sum(keyA), "wrong-key-xyz", "secret-program-text"} {
		require.NotContains(t, logs, secret)
	}
}

func TestServer_badBodies(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Server.MaxBodyBytes = 1000 })
	tests := []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"at the limit", "/v1/executions", `{"code":"return 1","description":"` + strings.Repeat("x", 1000-44) + `"}`, 200, `"completed"`},
		{"past the limit", "/v1/executions", `{"code":"return 1","description":"` + strings.Repeat("x", 1000) + `"}`, 413, "over the maximum of 1000 bytes"},
		{"malformed", "/v1/executions", `{"code":`, 400, "the JSON ends before its value does"},
		{"unknown field", "/v1/executions", `{"code":"return 1","cod":1}`, 400, `unknown field \"cod\"`},
		{"wrong type", "/v1/executions", `{"code":1}`, 400, "field code"},
		{"no code", "/v1/executions", `{}`, 400, "field code: required"},
		{"trailing data", "/v1/calls", `{"name":"x"} {}`, 400, "data after the JSON value"},
		{"bad results", "/v1/executions/ex_1/tool_results", `{"results":[{"id":"c","ok":false}]}`, 400, "error: required"},
		{"client tool shadows a server tool", "/v1/executions", `{"code":"return 1","client_tools":[{"name":"list","input_schema":{"type":"object"}}]}`, 400, "field client_tools"},
		{"bad client tool", "/v1/executions", `{"code":"return 1","client_tools":[{"name":"run_code","input_schema":{}}]}`, 400, "not a valid tool name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.LessOrEqual(t, len(tt.body), 1000+len(`{"code":"return 1","description":""}`))
			status, body, _ := raw(t, "POST", ts.url+tt.path, keyA, tt.body)
			require.Equal(t, tt.status, status, body)
			require.Contains(t, body, tt.want)
		})
	}
}

func TestServer_mcp_collapse(t *testing.T) {
	ts := newServer(t, nil)
	hc := &http.Client{Transport: bearer{keyA}}
	cl := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := cl.Connect(ctx(t), &mcp.StreamableClientTransport{Endpoint: ts.url + "/mcp", HTTPClient: hc}, nil)
	require.NoError(t, err)
	defer cs.Close()
	list, err := cs.ListTools(ctx(t), nil)
	require.NoError(t, err)
	require.Len(t, list.Tools, 1)
	require.Equal(t, "run_code", list.Tools[0].Name)
	res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "list", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.True(t, res.IsError, "in ptc mode a direct call of another tool is refused")
	res, err = cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": "return 40 + 2", "description": "sum"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Contains(t, res.Content[0].(*mcp.TextContent).Text, "42")
}

type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(context.WithoutCancel(r.Context()))
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

func TestServer_sessions_ownReadBeforeWrite(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	run := func(session, code string) *serve.ExecutionState {
		t.Helper()
		st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: code, Session: session})
		require.NoError(t, err)
		return st
	}
	st := run("s1", `await tools.write({path: "f.txt", content: "1"}); await tools.read({path: "f.txt"}); return "ok"`)
	require.Equal(t, serve.StatusCompleted, st.Status, "%+v", st.Error)
	st = run("s2", `try { await tools.write({path: "f.txt", content: "2"}); return "written" } catch (e) { return "refused" }`)
	require.JSONEq(t, `"refused"`, string(st.Value), "session s2 never read f.txt: s1's read does not count")
	st = run("s1", `await tools.write({path: "f.txt", content: "3"}); return "written"`)
	require.JSONEq(t, `"written"`, string(st.Value), "session s1 read it")

	status, body, _ := raw(t, "POST", ts.url+"/v1/executions", keyA, `{"code":"return 1","session":"bad session!"}`)
	require.Equal(t, 400, status)
	require.Contains(t, body, "field session")
}
