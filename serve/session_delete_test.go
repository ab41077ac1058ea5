package serve_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
)

// deleteMissing asserts that DELETE /v1/sessions/{name} answers 404.
func deleteMissing(t *testing.T, c *client.Client, name string) {
	t.Helper()
	e := apiErr(t, c.DeleteSession(ctx(t), "", name))
	require.Equal(t, http.StatusNotFound, e.Status)
	require.Equal(t, serve.CodeNotFound, e.Body.Code)
	require.Contains(t, e.Body.Message, `no session "`+name+`" with kept state for this tenant`)
}

func TestServer_DeleteSession_startsAfresh(t *testing.T) {
	for _, h := range sessionHosts {
		t.Run(h.name, func(t *testing.T) {
			ts := newServer(t, func(c *serve.Config) {
				if h.edit != nil {
					h.edit(0, c)
				}
			})
			c := ts.client(keyA)
			keep(t, c, "chat", `globalThis.n = 41; return n`)
			keep(t, c, "other", `globalThis.n = 7; return n`)
			require.NoError(t, c.DeleteSession(ctx(t), "", "chat"))
			held, listed := serve.HeldSessions(ts.srv, "a")
			require.Equal(t, held, listed, "the main executor's live copy is dropped with the held entry")
			require.Equal(t, held, serve.SessionTurns(ts.srv), "no turn is left behind")
			deleteMissing(t, c, "chat")
			require.JSONEq(t, `"undefined"`, string(keep(t, c, "chat", `return typeof n`).Value))
			require.JSONEq(t, `7`, string(keep(t, c, "other", `return n`).Value), "another session is untouched")
		})
	}
}

func TestServer_DeleteSession_missingIsNotFound(t *testing.T) {
	ts := newServer(t, nil)
	deleteMissing(t, ts.client(keyA), "never")
	// A session without keep_state (a workspace session only) has no
	// record either.
	_, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`, Session: "ws"})
	require.NoError(t, err)
	deleteMissing(t, ts.client(keyA), "ws")
}

func TestServer_DeleteSession_tenantsApart(t *testing.T) {
	ts := newServer(t, nil)
	keep(t, ts.client(keyA), "same", `globalThis.secret = "a's"; return 1`)
	deleteMissing(t, ts.client(keyB), "same")
	keep(t, ts.client(keyB), "same", `globalThis.secret = "b's"; return 1`)
	require.NoError(t, ts.client(keyB).DeleteSession(ctx(t), "", "same"))
	require.JSONEq(t, `"a's"`, string(keep(t, ts.client(keyA), "same", `return secret`).Value))
}

func TestServer_DeleteSession_badRequest(t *testing.T) {
	ts := newServer(t, nil)
	for _, tc := range []struct{ name, path, want string }{
		{"bad name", "/v1/sessions/a%20b", "the session name"},
		{"name too long", "/v1/sessions/" + longName, "the session name"},
		{"unknown scope", "/v1/sessions/chat?scope=nope", "query parameter scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := raw(t, http.MethodDelete, ts.url+tc.path, keyA, "")
			require.Equal(t, http.StatusBadRequest, code, body)
			require.Contains(t, body, tc.want)
		})
	}
	code, _, _ := raw(t, http.MethodDelete, ts.url+"/v1/sessions/chat", "", "")
	require.Equal(t, http.StatusUnauthorized, code)
}

var longName = func() string {
	b := make([]byte, 129)
	for i := range b {
		b[i] = 'x'
	}
	return string(b)
}()

// TestServer_DeleteSession_waitsForItsProgram: a DELETE while a program
// runs in the session waits (wait_ms), then is 409 and deletes nothing;
// once the program ends, it deletes.
func TestServer_DeleteSession_waitsForItsProgram(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Tenants[0].Sessions.WaitMS = 300 })
	c := ts.client(keyA)
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `globalThis.n = 1; return await tools.ask({q: "?"})`,
		Session: "chat", KeepState: true, ClientTools: []serve.ClientTool{askTool}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)

	e := apiErr(t, c.DeleteSession(ctx(t), "", "chat"))
	require.Equal(t, http.StatusConflict, e.Status)
	require.Equal(t, serve.CodeConflict, e.Body.Code)
	require.Contains(t, e.Body.Message, "its DELETE waits (tenants[].sessions.wait_ms); nothing was deleted")
	require.NotEmpty(t, e.RetryAfter)

	done, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "yes"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `1`, string(keep(t, c, "chat", `return n`).Value), "the 409 deleted nothing")
	require.NoError(t, c.DeleteSession(ctx(t), "", "chat"))
	require.JSONEq(t, `"undefined"`, string(keep(t, c, "chat", `return typeof n`).Value))
}

func TestServer_DeleteSession_storeUnavailable(t *testing.T) {
	dir := t.TempDir()
	ts := newServer(t, func(c *serve.Config) { c.Store = &serve.StoreConfig{Kind: "dir", Path: dir} })
	c := ts.client(keyA)
	keep(t, c, "chat", `globalThis.n = 1; return n`)
	// The session records cannot be read: sessions/ is a file.
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "sessions")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sessions"), nil, 0o600))
	e := apiErr(t, c.DeleteSession(ctx(t), "", "chat"))
	require.Equal(t, http.StatusServiceUnavailable, e.Status)
	require.Equal(t, serve.CodeStoreUnavailable, e.Body.Code)
	require.Contains(t, e.Body.Message, `session "chat" could not be claimed in the store`)
	require.Contains(t, e.Body.Message, "nothing was deleted")
	require.NotEmpty(t, e.RetryAfter)
}

// TestCluster_DeleteSession_fromAnotherNode: a DELETE on node 2 of a
// session node 1 ran last ends it there too.
func TestCluster_DeleteSession_fromAnotherNode(t *testing.T) {
	for _, h := range sessionHosts {
		t.Run(h.name, func(t *testing.T) {
			nodes := newNodes(t, 2, h.edit)
			keep(t, nodes[0].client(keyA), "chat", `globalThis.n = 41; return n`)
			keep(t, nodes[0].client(keyB), "chat", `globalThis.n = 5; return n`)
			require.NoError(t, nodes[1].client(keyA).DeleteSession(ctx(t), "", "chat"))
			deleteMissing(t, nodes[0].client(keyA), "chat")
			require.JSONEq(t, `"undefined"`, string(keep(t, nodes[0].client(keyA), "chat", `return typeof n`).Value))
			require.JSONEq(t, `5`, string(keep(t, nodes[0].client(keyB), "chat", `return n`).Value), "another tenant's session of the name is untouched")
		})
	}
}

// TestServer_KeepState_maxStateSessions: a tenant's sessions in the store
// are capped at tenants[].sessions.max_sessions (below, at, past it),
// counted only when a session is created, per tenant.
func TestServer_KeepState_maxStateSessions(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) {
		c.Tenants[0].Sessions.MaxSessions = 2
		c.Tenants[1].Sessions.MaxSessions = 2
	})
	a := ts.client(keyA)
	keep(t, a, "s1", `globalThis.n = 1; return n`)
	keep(t, a, "s2", `globalThis.n = 2; return n`)
	_, err := a.Execute(ctx(t), serve.ExecutionRequest{Code: `return 3`, Session: "s3", KeepState: true})
	e := apiErr(t, err)
	require.Equal(t, http.StatusTooManyRequests, e.Status)
	require.Equal(t, serve.CodeQuotaExceeded, e.Body.Code)
	require.Equal(t, serve.ReasonMaxStateSessions, e.Body.Reason)
	require.Contains(t, e.Body.Message, "tenant a has 2 sessions with kept state, its maximum (tenants[].sessions.max_sessions)")
	require.NotEmpty(t, e.RetryAfter)

	// An existing session is claimed, not counted; nor is a program
	// without keep_state.
	require.JSONEq(t, `1`, string(keep(t, a, "s1", `return n`).Value))
	_, err = a.Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`, Session: "s3"})
	require.NoError(t, err)
	// Per tenant: b has sessions of its own.
	keep(t, ts.client(keyB), "s1", `return 1`)
	keep(t, ts.client(keyB), "s3", `return 1`)

	require.NoError(t, a.DeleteSession(ctx(t), "", "s2"))
	require.JSONEq(t, `3`, string(keep(t, a, "s3", `globalThis.n = 3; return n`).Value))
}

// TestServer_DeleteSession_expiredDropsLocalCopy: a session whose record
// expired is 404, and the live copy the main executor still held of it
// is dropped.
func TestServer_DeleteSession_expiredDropsLocalCopy(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) {
		c.Workspace = "" // the main executor holds the session between programs
		c.Tenants[0].Sessions.TTLMS = 200
	})
	c := ts.client(keyA)
	keep(t, c, "chat", `globalThis.n = 1; return n`)
	held, _ := serve.HeldSessions(ts.srv, "a")
	require.Equal(t, 1, held)
	time.Sleep(time.Second) // past the record's ttl_ms
	deleteMissing(t, c, "chat")
	held, listed := serve.HeldSessions(ts.srv, "a")
	require.Zero(t, held)
	require.Zero(t, listed)
	require.Zero(t, serve.SessionTurns(ts.srv))
}
