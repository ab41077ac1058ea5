package serve_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
)

func TestMain(m *testing.M) {
	// The embedded default spills parked executions under the user's cache
	// directory: the tests' own, removed at the end.
	cache, err := os.MkdirTemp("", "ptcx-serve-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	code := m.Run()
	testkit.Close()
	os.RemoveAll(cache)
	os.Exit(code)
}

// The test tenants' keys.
const (
	keyA = "key-tenant-a-0123456789"
	keyB = "key-tenant-b-9876543210"
	keyN = "key-tenant-native-5555"
)

func sum(key string) string {
	s := sha256.Sum256([]byte(key))
	return hex.EncodeToString(s[:])
}

// lockedBuffer collects the server's logs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type testServer struct {
	srv  *serve.Server
	url  string
	logs *lockedBuffer
}

func (ts *testServer) client(key string) *client.Client { return client.New(ts.url, key, nil) }

// newServer serves a config of three tenants (a and b in ptc mode, native
// in native mode) with a workspace on loopback, on the test binary's
// shared sandbox; edit changes the config first.
func newServer(t testing.TB, edit func(*serve.Config)) *testServer {
	t.Helper()
	return newServerOn(t, testkit.Sandbox(t), edit)
}

// newServerOn is newServer with the sandbox rt.
func newServerOn(t testing.TB, rt executor.CodeRuntime, edit func(*serve.Config)) *testServer {
	t.Helper()
	return newServerWith(t, serve.Options{Runtime: rt}, edit)
}

// newServerWith is newServer with opts (and their Runtime, or one the
// server starts when nil); opts.Logger is the test's.
func newServerWith(t testing.TB, opts serve.Options, edit func(*serve.Config)) *testServer {
	t.Helper()
	cfg := &serve.Config{
		Listen:    "127.0.0.1:0",
		Workspace: t.TempDir(),
		// Parking at once, as the tests of parking expect; livewait_test.go
		// turns live waits on.
		Server: serve.ServerLimits{MaxWaitMS: 20000, DrainTimeoutMS: 2000, LiveWaitMS: -1},
		Tenants: []serve.TenantConfig{
			{Name: "a", KeySHA256: sum(keyA), Mode: "ptc"},
			{Name: "b", KeySHA256: sum(keyB), Mode: "ptc"},
			{Name: "native", KeySHA256: sum(keyN), Mode: "native"},
		},
	}
	withTestStore(t, cfg)
	if edit != nil {
		edit(cfg)
	}
	logs := &lockedBuffer{}
	opts.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	srv, err := serve.New(context.Background(), cfg, opts)
	require.NoError(t, err)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		require.NoError(t, srv.Close(context.Background()))
	})
	return &testServer{srv: srv, url: hs.URL, logs: logs}
}

func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// raw sends a request with key (none when empty) and returns the status,
// the body and the headers.
func raw(t *testing.T, method, url, key, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b), resp.Header
}

func apiErr(t *testing.T, err error) *client.Error {
	t.Helper()
	require.Error(t, err)
	var e *client.Error
	require.ErrorAs(t, err, &e)
	return e
}

var askTool = serve.ClientTool{
	Name: "ask", Description: "Ask the user a question.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`),
}

func boolp(b bool) *bool { return &b }
