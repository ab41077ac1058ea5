package serve_test

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
)

// TestServer_Serve_drainsWhenCancelled is what SIGTERM does in `ptcx
// serve`: the context ends, the server drains (a running execution
// finishes, nothing new is accepted) and Serve returns nil.
func TestServer_Serve_drainsWhenCancelled(t *testing.T) {
	cfg := &serve.Config{Listen: "127.0.0.1:0", Server: serve.ServerLimits{DrainTimeoutMS: 10000},
		Tenants: []serve.TenantConfig{{Name: "a", KeySHA256: sum(keyA)}}}
	logs := &lockedBuffer{}
	srv, err := serve.New(context.Background(), cfg, serve.Options{Runtime: testkit.Sandbox(t), Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	require.NoError(t, err)
	defer srv.Close(context.Background())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, l) }()

	c := client.New("http://"+l.Addr().String(), keyA, nil)
	_, err = c.Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 300)); return "done"`, Wait: boolp(false)})
	require.NoError(t, err)
	stop()
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return within 30 s of its context ending")
	}
	require.Contains(t, logs.String(), `"msg":"drained","completed":1,"cancelled":0`, "the running execution finished within the drain")
	_, err = c.Get(ctx(t), "ex_any", false)
	require.Error(t, err, "the listener is closed after the drain")
}

// TestServer_HTTPServer_longAnswersOutliveTheReadTimeout: the read
// timeout bounds receiving a request, never a long wait or an event stream
// after it (net/http lifts the read deadline once the body is read).
func TestServer_HTTPServer_longAnswersOutliveTheReadTimeout(t *testing.T) {
	cfg := &serve.Config{Listen: "127.0.0.1:0", Server: serve.ServerLimits{ReadTimeoutMS: 200},
		Tenants: []serve.TenantConfig{{Name: "a", KeySHA256: sum(keyA)}}}
	srv, err := serve.New(context.Background(), cfg, serve.Options{Runtime: testkit.Sandbox(t)})
	require.NoError(t, err)
	defer srv.Close(context.Background())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := srv.HTTPServer()
	go func() { _ = hs.Serve(l) }()
	defer hs.Close()

	c := client.New("http://"+l.Addr().String(), keyA, nil)
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 700)); return "slow"`})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status, "a wait of 700 ms outlives a read timeout of 200 ms")

	st, err = c.Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 700)); return "slow"`, Wait: boolp(false)})
	require.NoError(t, err)
	events, err := c.Events(ctx(t), st.ID, 0)
	require.NoError(t, err)
	require.NotEmpty(t, events)
	require.Equal(t, serve.EventDone, events[len(events)-1].Type, "the stream ran to its done event")
}
