package serve_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// An execution's workspace state is named by workspace_state, or by the
// deprecated session without keep_state: both give the same read-before-write
// state of that name.
func TestServer_workspaceState_ownReadBeforeWrite(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	const (
		write = `try { await tools.write({path: "f.txt", content: "x"}); return "written" } catch (e) { return "refused" }`
		read  = `await tools.read({path: "f.txt"}); return "read"`
	)
	run := func(req serve.ExecutionRequest) string {
		t.Helper()
		st, err := c.Execute(ctx(t), req)
		require.NoError(t, err)
		require.Equal(t, serve.StatusCompleted, st.Status, "%+v", st.Error)
		return string(st.Value)
	}
	require.JSONEq(t, `"written"`, run(serve.ExecutionRequest{Code: write, WorkspaceState: "w1"}), "a new file may always be created")
	for i, tt := range []struct {
		name   string
		reader serve.ExecutionRequest
		writer serve.ExecutionRequest
	}{
		{"workspace_state", serve.ExecutionRequest{Code: read, WorkspaceState: "a1"}, serve.ExecutionRequest{Code: write, WorkspaceState: "a1"}},
		{"session, deprecated", serve.ExecutionRequest{Code: read, Session: "b1"}, serve.ExecutionRequest{Code: write, Session: "b1"}},
		{"workspace_state, then session", serve.ExecutionRequest{Code: read, WorkspaceState: "c1"}, serve.ExecutionRequest{Code: write, Session: "c1"}},
		{"session, then workspace_state", serve.ExecutionRequest{Code: read, Session: "d1"}, serve.ExecutionRequest{Code: write, WorkspaceState: "d1"}},
		{"both, the same name", serve.ExecutionRequest{Code: read, Session: "e1", WorkspaceState: "e1"}, serve.ExecutionRequest{Code: write, WorkspaceState: "e1"}},
		{"keep_state's session, then workspace_state", serve.ExecutionRequest{Code: read, Session: "f1", KeepState: true}, serve.ExecutionRequest{Code: write, WorkspaceState: "f1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			other := serve.ExecutionRequest{Code: write, WorkspaceState: fmt.Sprintf("other-%d", i)}
			require.JSONEq(t, `"refused"`, run(other), "a state that never read f.txt")
			require.JSONEq(t, `"read"`, run(tt.reader))
			require.JSONEq(t, `"written"`, run(tt.writer), "the same state read it")
			require.JSONEq(t, `"refused"`, run(other), "another state's read does not count")
		})
	}
}

func TestDecodeExecutionRequest_workspaceState(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		state      string // the decoded request's members
		session    string
		err        string // "": accepted
	}{
		{name: "workspace_state", body: `{"code":"1","workspace_state":"w"}`, state: "w"},
		{name: "session, deprecated", body: `{"code":"1","session":"w"}`, session: "w"},
		{name: "both, the same", body: `{"code":"1","session":"w","workspace_state":"w"}`, state: "w", session: "w"},
		{name: "keep_state", body: `{"code":"1","session":"s","keep_state":true}`, session: "s"},
		{name: "keep_state, its session's workspace state", body: `{"code":"1","session":"s","keep_state":true,"workspace_state":"s"}`, state: "s", session: "s"},
		{name: "both, two names", body: `{"code":"1","session":"a","workspace_state":"b"}`,
			err: `field workspace_state: "b" and field session "a" name two workspace states: session without keep_state is the deprecated name of workspace_state; give workspace_state alone`},
		{name: "keep_state, another workspace state", body: `{"code":"1","session":"s","keep_state":true,"workspace_state":"w"}`,
			err: `field workspace_state: "w" is not the session "s": a keep_state execution uses its session's own workspace state`},
		{name: "keep_state without session", body: `{"code":"1","keep_state":true,"workspace_state":"w"}`, err: "field keep_state: requires field session"},
		{name: "workspace_state invalid", body: `{"code":"1","workspace_state":"bad name!"}`, err: "field workspace_state: \"bad name!\" must match"},
		{name: "workspace_state at the maximum", body: `{"code":"1","workspace_state":"` + strings.Repeat("w", 128) + `"}`, state: strings.Repeat("w", 128)},
		{name: "workspace_state past the maximum", body: `{"code":"1","workspace_state":"` + strings.Repeat("w", 129) + `"}`, err: "field workspace_state:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := serve.DecodeExecutionRequest([]byte(tt.body))
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.state, req.WorkspaceState)
			require.Equal(t, tt.session, req.Session)
		})
	}
}

// A request that names two workspace states is a 400 naming the field, and
// nothing runs.
func TestServer_workspaceState_inconsistentIs400(t *testing.T) {
	ts := newServer(t, nil)
	for _, body := range []string{
		`{"code":"return 1","session":"a","workspace_state":"b"}`,
		`{"code":"return 1","session":"a","keep_state":true,"workspace_state":"b"}`,
	} {
		status, resp, _ := raw(t, "POST", ts.url+"/v1/executions", keyA, body)
		require.Equal(t, 400, status, body)
		require.Contains(t, resp, `"code":"BAD_REQUEST"`)
		require.Contains(t, resp, "field workspace_state")
	}
}
