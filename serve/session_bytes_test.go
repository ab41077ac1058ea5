package serve_test

import (
	"encoding/binary"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/store"
)

// sessionStores are the stores the session tests run on: the node's own
// memory (no store configured: PTCX_TEST_STORE's, when set) and a
// directory. heldLive runs programs in the tenant's main executor (no
// workspace), which holds sessions live between programs.
var sessionStores = []struct {
	name string
	edit func(t *testing.T, c *serve.Config)
}{
	{"memory", func(*testing.T, *serve.Config) {}},
	{"dir", func(t *testing.T, c *serve.Config) { c.Store = &serve.StoreConfig{Kind: "dir", Path: t.TempDir()} }},
	{"dir, held live", func(t *testing.T, c *serve.Config) {
		c.Store = &serve.StoreConfig{Kind: "dir", Path: t.TempDir()}
		c.Workspace = ""
	}},
}

// eachSessionStore runs f on a server of each of sessionStores, or of the
// first n.
func eachSessionStore(t *testing.T, n int, f func(t *testing.T, ts *testServer)) {
	for _, st := range sessionStores[:n] {
		t.Run(st.name, func(t *testing.T) {
			f(t, newServer(t, func(c *serve.Config) { st.edit(t, c) }))
		})
	}
}

// snapshotOf is the object session name of tenant's record names.
func snapshotOf(t *testing.T, ts *testServer, tenant, name string) string {
	t.Helper()
	r, err := serve.SessionRecord(ts.srv, tenant, "", name)
	require.NoError(t, err)
	require.NotEmpty(t, r.Snapshot)
	return r.Snapshot
}

// pointAt makes session name of tenant's record name object.
func pointAt(t *testing.T, ts *testServer, tenant, name, object string) {
	t.Helper()
	require.NoError(t, serve.EditSessionRecord(ts.srv, tenant, "", name, func(r *store.SessionRecord) { r.Snapshot = object }))
}

// refusedAfresh runs code in b's session "chat" and checks that the
// saved state was refused (for why): the program started afresh and its
// first log line says so, naming nothing of tenant a.
func refusedAfresh(t *testing.T, ts *testServer, code, why string) *serve.ExecutionState {
	t.Helper()
	st := keep(t, ts.client(keyB), "chat", code)
	require.NotEmpty(t, st.Logs)
	require.Contains(t, st.Logs[0], "the session's saved state could not be restored, so this program starts afresh")
	require.Contains(t, st.Logs[0], "its saved state in the store is refused: "+why)
	require.NotContains(t, st.Logs[0], "a's")
	require.NotContains(t, st.Logs[0], `tenant "a"`)
	require.Contains(t, ts.logs.String(), "refused a session's saved state")
	return st
}

// TestServer_KeepState_forgedRecordRefused: b's record pointed at a's
// saved state (the red team's attack on a dir store): b's program starts
// afresh and reads none of a's globals; b's save leaves a's object in
// place, and a's session goes on from it; b's session goes on from its
// own new state. DELETE of b's forged session deletes a's object neither.
func TestServer_KeepState_forgedRecordRefused(t *testing.T) {
	eachSessionStore(t, len(sessionStores), func(t *testing.T, ts *testServer) {
		keep(t, ts.client(keyA), "chat", `globalThis.secret = "a's"; return 1`)
		keep(t, ts.client(keyB), "chat", `globalThis.mine = "b's"; return 1`)
		aSnap := snapshotOf(t, ts, "a", "chat")
		pointAt(t, ts, "b", "chat", aSnap)

		st := refusedAfresh(t, ts, `globalThis.again = 2; return [typeof secret, typeof mine]`, "its name is not one of this session's objects")
		require.JSONEq(t, `["undefined", "undefined"]`, string(st.Value))
		_, err := serve.SessionObject(ts.srv, aSnap)
		require.NoError(t, err, "b's save left a's object in the store")
		require.Contains(t, ts.logs.String(), "a session's record named an object that is not one of the session's: it is not deleted")
		require.JSONEq(t, `"a's"`, string(keep(t, ts.client(keyA), "chat", `return secret`).Value), "a's session is intact")
		require.JSONEq(t, `2`, string(keep(t, ts.client(keyB), "chat", `return again`).Value), "b's session goes on from its new state")
		require.True(t, strings.HasPrefix(snapshotOf(t, ts, "b", "chat"), "ss_"+serve.SessionKey("b", "", "chat")+"."))

		aSnap = snapshotOf(t, ts, "a", "chat") // a's program saved a new one
		pointAt(t, ts, "b", "chat", aSnap)
		code, body, _ := raw(t, http.MethodDelete, ts.url+"/v1/sessions/chat", keyB, "")
		require.Equal(t, http.StatusNoContent, code, body)
		_, err = serve.SessionObject(ts.srv, aSnap)
		require.NoError(t, err, "b's DELETE left a's object in the store")
		require.JSONEq(t, `"a's"`, string(keep(t, ts.client(keyA), "chat", `return secret`).Value))
	})
}

// TestServer_KeepState_copiedObjectRefused: a's bytes copied under a name
// of b's session (its key, with the bytes' own checksum), and b's own
// bytes copied under another name of its session, are refused; a's
// original is untouched.
func TestServer_KeepState_copiedObjectRefused(t *testing.T) {
	eachSessionStore(t, len(sessionStores), func(t *testing.T, ts *testServer) {
		keep(t, ts.client(keyA), "chat", `globalThis.secret = "a's"; return 1`)
		keep(t, ts.client(keyB), "chat", `globalThis.mine = "b's"; return 1`)
		aSnap, bSnap := snapshotOf(t, ts, "a", "chat"), snapshotOf(t, ts, "b", "chat")
		aKey, bKey := serve.SessionKey("a", "", "chat"), serve.SessionKey("b", "", "chat")
		aBytes, err := serve.SessionObject(ts.srv, aSnap)
		require.NoError(t, err)
		copied := strings.Replace(aSnap, aKey, bKey, 1)
		require.NoError(t, serve.PutSessionObject(ts.srv, copied, aBytes))
		pointAt(t, ts, "b", "chat", copied)
		st := refusedAfresh(t, ts, `return typeof secret`, "its bytes are another session's state")
		require.JSONEq(t, `"undefined"`, string(st.Value))

		bBytes, err := serve.SessionObject(ts.srv, bSnap)
		require.NoError(t, err)
		renamed := bSnap[:len(bSnap)-len("0123456789ab.0123456789abcdef")] + "0123456789ab" + bSnap[len(bSnap)-len(".0123456789abcdef"):]
		require.NotEqual(t, bSnap, renamed)
		require.NoError(t, serve.PutSessionObject(ts.srv, renamed, bBytes))
		pointAt(t, ts, "b", "chat", renamed)
		refusedAfresh(t, ts, `return typeof mine`, "its bytes were written under another name (copied or renamed)")

		got, err := serve.SessionObject(ts.srv, aSnap)
		require.NoError(t, err)
		require.Equal(t, aBytes, got)
		require.JSONEq(t, `"a's"`, string(keep(t, ts.client(keyA), "chat", `return secret`).Value))
	})
}

// TestServer_KeepState_corruptObjectRefused: a saved state altered in its
// state, its meta or its header, cut short, or written before sessions
// carried their owner (the raw state, under an old name), is refused and
// the program starts afresh. (A node holding the session live does not read
// an object its record still names: the corruption is never read there.)
func TestServer_KeepState_corruptObjectRefused(t *testing.T) {
	eachSessionStore(t, 2, func(t *testing.T, ts *testServer) {
		c := ts.client(keyB)
		keep(t, c, "chat", `globalThis.mine = "b's"; return 1`)
		snap := snapshotOf(t, ts, "b", "chat")
		good, err := serve.SessionObject(ts.srv, snap)
		require.NoError(t, err)
		metaEnd := 16 + int(binary.BigEndian.Uint32(good[12:16]))
		flip := func(i int) []byte {
			b := append([]byte(nil), good...)
			b[i] ^= 0x20
			return b
		}
		for _, tt := range []struct {
			name string
			data []byte
			why  string
		}{
			{"a byte of the state", flip(len(good) - 1), "its state's checksum is not the one its meta records (corrupt)"},
			{"a byte of the meta's names", flip(metaEnd - 10), "not a session's saved state of ptcx serve"},
			{"the version", flip(11), "it is of version"},
			{"cut short", good[:metaEnd-1], "its meta claims"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				require.NoError(t, serve.PutSessionObject(ts.srv, snap, tt.data))
				pointAt(t, ts, "b", "chat", snap)
				st := refusedAfresh(t, ts, `globalThis.mine = "b's"; return typeof mine`, "")
				require.Contains(t, st.Logs[0], tt.why)
				snap = snapshotOf(t, ts, "b", "chat")
				good, err = serve.SessionObject(ts.srv, snap)
				require.NoError(t, err)
				metaEnd = 16 + int(binary.BigEndian.Uint32(good[12:16]))
			})
		}

		t.Run("written before sessions carried their owner", func(t *testing.T) {
			old := "ss_0123456789abcdef0123456789"
			require.NoError(t, serve.PutSessionObject(ts.srv, old, good[metaEnd:]))
			pointAt(t, ts, "b", "chat", old)
			refusedAfresh(t, ts, `return typeof mine`, "its name is not one of this session's objects (written before sessions were bound to their state")
			_, err := serve.SessionObject(ts.srv, old)
			require.NoError(t, err, "an object whose name proves nothing is never deleted")
		})
	})
}

// TestServer_KeepState_savedObjectsAreTheSessions: a normal session's
// objects carry its name, and each save deletes the one it replaces.
func TestServer_KeepState_savedObjectsAreTheSessions(t *testing.T) {
	eachSessionStore(t, len(sessionStores), func(t *testing.T, ts *testServer) {
		c := ts.client(keyA)
		keep(t, c, "chat", `globalThis.n = 1; return n`)
		first := snapshotOf(t, ts, "a", "chat")
		require.Regexp(t, `^ss_`+serve.SessionKey("a", "", "chat")+`\.[0-9a-f]{12}\.[0-9a-f]{16}$`, first)
		require.JSONEq(t, `2`, string(keep(t, c, "chat", `return ++n`).Value))
		require.NotEqual(t, first, snapshotOf(t, ts, "a", "chat"))
		_, err := serve.SessionObject(ts.srv, first)
		require.ErrorIs(t, err, store.ErrNotFound, "the replaced object, the session's own, is deleted")
		require.NotContains(t, ts.logs.String(), "refused a session's saved state")
	})
}
