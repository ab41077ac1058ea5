package mcpserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpserver"
	"github.com/ptcx/ptcx/registry"
)

// connectTo connects a client of the official SDK to srv; close ends the
// connection and waits for the server's side to end.
func connectTo(t *testing.T, srv *mcp.Server) (cs *mcp.ClientSession, close func()) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	require.NoError(t, err)
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil)
	cs, err = client.Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	closed := false
	close = func() {
		if !closed {
			closed = true
			require.NoError(t, cs.Close())
			_ = ss.Wait()
		}
	}
	t.Cleanup(close)
	return cs, close
}

func TestServer_sessions_shareStatePerConnection(t *testing.T) {
	f := newFixture(t, executor.NewConfig().WithRuntime(sharedRuntime(t)))
	srv, err := mcpserver.New(f.exec, "ptc", mcpserver.Options{Sessions: true})
	require.NoError(t, err)
	one, closeOne := connectTo(t, srv)
	two, _ := connectTo(t, srv)

	res := callTool(t, one, registry.RunCode, runCodeArgs(t, `const shared = (await tools.add({x: 40, y: 1})).sum; return shared`))
	require.False(t, res.IsError, text(t, res))
	require.Equal(t, "41", text(t, res))
	res = callTool(t, one, registry.RunCode, runCodeArgs(t, `return shared + 1`))
	require.False(t, res.IsError, text(t, res))
	require.Equal(t, "42", text(t, res), "the second call of a connection sees the first's variable")

	res = callTool(t, two, registry.RunCode, runCodeArgs(t, `return typeof shared`))
	require.False(t, res.IsError, text(t, res))
	require.Equal(t, "undefined", text(t, res), "another connection does not")
	require.Len(t, f.exec.Sessions("ptc"), 2)

	closeOne()
	require.Eventually(t, func() bool { return len(f.exec.Sessions("ptc")) == 1 }, 10*time.Second, 5*time.Millisecond,
		"a connection's session is closed when it ends")
}

func TestServer_sessions_offByDefault(t *testing.T) {
	f := newFixture(t, executor.NewConfig().WithRuntime(sharedRuntime(t)))
	cs := connect(t, f.exec, "ptc", "")
	res := callTool(t, cs, registry.RunCode, runCodeArgs(t, `globalThis.kept = 1; return 1`))
	require.False(t, res.IsError, text(t, res))
	res = callTool(t, cs, registry.RunCode, runCodeArgs(t, `return typeof kept`))
	require.Equal(t, "undefined", text(t, res))
	require.Empty(t, f.exec.Sessions("ptc"))
}
