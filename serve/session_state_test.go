package serve_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
)

// keep runs code with keep_state in session name.
func keep(t *testing.T, c *client.Client, name, code string) *serve.ExecutionState {
	t.Helper()
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: code, Session: name, KeepState: true})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status, "%+v", st.Error)
	return st
}

func TestServer_KeepState_globalsPersist(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	keep(t, c, "chat", `globalThis.n = 41; const greeting: string = "hi"; return n`)
	st := keep(t, c, "chat", `return [n + 1, greeting]`)
	require.JSONEq(t, `[42, "hi"]`, string(st.Value))

	// Without keep_state, and in another session, a program starts afresh.
	fresh, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `return typeof n`, Session: "chat"})
	require.NoError(t, err)
	require.JSONEq(t, `"undefined"`, string(fresh.Value))
	require.JSONEq(t, `"undefined"`, string(keep(t, c, "other", `return typeof n`).Value))
	require.JSONEq(t, `42`, string(keep(t, c, "chat", `return ++n`).Value))
	// Each program ran in an executor of its own (the server has a
	// workspace): nothing is held, no turn kept.
	require.Zero(t, serve.SessionTurns(ts.srv))
}

func TestServer_KeepState_requiresSession(t *testing.T) {
	ts := newServer(t, nil)
	code, body, _ := raw(t, http.MethodPost, ts.url+"/v1/executions", keyA, `{"code":"return 1","keep_state":true}`)
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, body, "field keep_state: requires field session")
}

func TestServer_KeepState_tenantsApart(t *testing.T) {
	ts := newServer(t, nil)
	keep(t, ts.client(keyA), "same", `globalThis.secret = "a's"; return 1`)
	require.JSONEq(t, `"undefined"`, string(keep(t, ts.client(keyB), "same", `return typeof secret`).Value))
	require.JSONEq(t, `"a's"`, string(keep(t, ts.client(keyA), "same", `return secret`).Value))
}

// TestServer_KeepState_clientToolWaitsInMemory: a keep_state program with
// client tools is not parked; it holds its session, and counts against
// max_pending, until its client answers.
func TestServer_KeepState_clientToolWaitsInMemory(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) {
		c.Tenants[0].Quotas.MaxPending = 1
		c.Tenants[0].Sessions.WaitMS = 300
	})
	c := ts.client(keyA)
	keep(t, c, "chat", `globalThis.n = 1; return n`)
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `n = 2; const a = await tools.ask({q: "?"}); n = 3; return a`,
		Session: "chat", KeepState: true, ClientTools: []serve.ClientTool{askTool}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)

	// Past the session wait: 409.
	began := time.Now()
	_, err = c.Execute(ctx(t), serve.ExecutionRequest{Code: `return n`, Session: "chat", KeepState: true})
	e := apiErr(t, err)
	require.Equal(t, http.StatusConflict, e.Status)
	require.Equal(t, serve.CodeConflict, e.Body.Code)
	require.Contains(t, e.Body.Message, `session "chat" is running another program`)
	require.Contains(t, e.Body.Message, "tenants[].sessions.wait_ms")
	require.GreaterOrEqual(t, time.Since(began), 300*time.Millisecond)

	// It counts against max_pending.
	_, err = c.Execute(ctx(t), serve.ExecutionRequest{Code: `return await tools.ask({q: "x"})`, ClientTools: []serve.ClientTool{askTool}})
	require.Equal(t, http.StatusTooManyRequests, apiErr(t, err).Status)

	done, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "yes"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `3`, string(keep(t, c, "chat", `return n`).Value))
}

// TestServer_KeepState_waitsItsTurn: an execution posted while its
// session runs another program waits (within wait_ms), then runs in the
// state that program left.
func TestServer_KeepState_waitsItsTurn(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `globalThis.n = 1; n += (await tools.ask({q: "?"})).length; return n`,
		Session: "chat", KeepState: true, ClientTools: []serve.ClientTool{askTool}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)
	var wg sync.WaitGroup
	var second *serve.ExecutionState
	wg.Add(1)
	go func() {
		defer wg.Done()
		second, err = c.Execute(ctx(t), serve.ExecutionRequest{Code: `return n * 10`, Session: "chat", KeepState: true})
	}()
	time.Sleep(200 * time.Millisecond) // the second is waiting (or not yet posted: either way it runs after)
	_, aerr := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "abc"))
	require.NoError(t, aerr)
	wg.Wait()
	require.NoError(t, err)
	require.JSONEq(t, `40`, string(second.Value))
}

func TestParseConfig_sessions(t *testing.T) {
	tenant := func(sessions string) string {
		return `{"listen":"127.0.0.1:1","tenants":[{"name":"a","key_sha256":"` + sum("k") + `","sessions":` + sessions + `}]}`
	}
	for _, tc := range []struct{ name, sessions, want string }{
		{"defaults", `{}`, ""},
		{"all set", `{"max_bytes":1048576,"wait_ms":100,"idle_suspend_ms":1000,"ttl_ms":60000}`, ""},
		{"max_bytes below the maximum", fmt.Sprint(`{"max_bytes":`, serve.MaxSessionStateBytes-1, `}`), ""},
		{"max_bytes at the maximum", fmt.Sprint(`{"max_bytes":`, serve.MaxSessionStateBytes, `}`), ""},
		{"max_bytes past the maximum", fmt.Sprint(`{"max_bytes":`, serve.MaxSessionStateBytes+1, `}`),
			"field tenants[0].sessions.max_bytes: 536866817 is over the maximum of 536866816 (what a store keeps of one snapshot, less the state's header)"},
		{"negative max_bytes", `{"max_bytes":-1}`, "field tenants[0].sessions.max_bytes: -1 is negative"},
		{"negative wait_ms", `{"wait_ms":-1}`, "field tenants[0].sessions.wait_ms: -1 is negative"},
		{"negative idle_suspend_ms", `{"idle_suspend_ms":-1}`, "field tenants[0].sessions.idle_suspend_ms: -1 is negative"},
		{"negative ttl_ms", `{"ttl_ms":-1}`, "field tenants[0].sessions.ttl_ms: -1 is negative"},
		{"max_sessions one", `{"max_sessions":1}`, ""},
		{"max_sessions set", `{"max_sessions":5000}`, ""},
		{"negative max_sessions", `{"max_sessions":-1}`, "field tenants[0].sessions.max_sessions: -1 is negative"},
		{"unknown field", `{"max":3}`, `unknown field "max"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := serve.ParseConfig([]byte(tenant(tc.sessions)))
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestServer_KeepState_maxBytes: a session whose state after a program
// is past tenants[].sessions.max_bytes is reset, and that program's first
// log line says so; one below it is kept.
func TestServer_KeepState_maxBytes(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Tenants[0].Sessions.MaxBytes = 96 << 10 }) // a small state is about 66 KB (the guest's heap after a GC), a big one far more
	c := ts.client(keyA)
	small := keep(t, c, "small", `globalThis.n = 1; return n`)
	require.Empty(t, small.Logs)
	big := keep(t, c, "big", `globalThis.data = Array.from({length: 50000}, (_, i) => "item" + i * 7919); return data.length`)
	require.JSONEq(t, `50000`, string(big.Value), "the result stands")
	require.NotEmpty(t, big.Logs)
	require.Contains(t, big.Logs[0], "the session's state was reset after this program")
	require.Contains(t, big.Logs[0], "over the limit of 98304 bytes")
	require.JSONEq(t, `"undefined"`, string(keep(t, c, "big", `return typeof data`).Value))
	require.JSONEq(t, `1`, string(keep(t, c, "small", `return n`).Value))
}

// TestServer_KeepState_storeFailures: a session record the store cannot
// write is 503 (nothing ran); a saved state the store lost starts the
// session afresh, and the program's first log line says so.
func TestServer_KeepState_storeFailures(t *testing.T) {
	dir := t.TempDir()
	ts := newServer(t, func(c *serve.Config) { c.Store = &serve.StoreConfig{Kind: "dir", Path: dir} })
	c := ts.client(keyA)
	keep(t, c, "chat", `globalThis.n = 1; return n`)

	// The saved state is gone: an execution with client tools (its own
	// executor, which loads the state) starts afresh, and says so.
	parks, err := filepath.Glob(filepath.Join(dir, "records", "ss_*.park"))
	require.NoError(t, err)
	require.Len(t, parks, 1, "one saved state: the old one is deleted once replaced")
	require.NoError(t, os.Remove(parks[0]))
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `return typeof n`, Session: "chat", KeepState: true, ClientTools: []serve.ClientTool{askTool}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status, "%+v", st.Error)
	require.JSONEq(t, `"undefined"`, string(st.Value))
	require.Contains(t, st.Logs[0], "the session's saved state could not be restored, so this program starts afresh")
	require.Contains(t, st.Logs[0], "is missing from the store")

	// The store cannot write session records.
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "sessions")))
	_, err = c.Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`, Session: "new", KeepState: true})
	e := apiErr(t, err)
	require.Equal(t, http.StatusServiceUnavailable, e.Status)
	require.Equal(t, serve.CodeStoreUnavailable, e.Body.Code)
	require.Contains(t, e.Body.Message, `session "new" could not be claimed in the store`)
	require.NotEmpty(t, e.RetryAfter)
}

// TestServer_KeepState_heldSessionsBound: a tenant's main executor holds
// at most MaxHeldSessions sessions between programs (below, at, past it);
// one it dropped continues from the store.
func TestServer_KeepState_heldSessionsBound(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Workspace = "" }) // else each session has an executor of its own

	c := ts.client(keyA)
	for i := range serve.MaxHeldSessions + 1 {
		keep(t, c, fmt.Sprintf("s%d", i), fmt.Sprintf(`globalThis.n = %d; return n`, i))
		held, listed := serve.HeldSessions(ts.srv, "a")
		require.Equal(t, min(i+1, serve.MaxHeldSessions), held, "after %d sessions", i+1)
		require.Equal(t, held, listed)
		require.Equal(t, held, serve.SessionTurns(ts.srv), "a turn is kept for each held session only")
	}
	require.JSONEq(t, `0`, string(keep(t, c, "s0", `return n`).Value), "the dropped session continues from the store")
}
