package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/mcpserver"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// The protocol versions the tests connect with: the SDK's default (the
// sessionless protocol, which starts with server/discover) and the last one
// with the initialize handshake.
var protocols = []string{"", "2025-11-25"}

const (
	addSchema = `{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false}`
	sumSchema = `{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`

	greetSchema = `{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"],"additionalProperties":false}`

	writeSchema = `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`
)

// fixture is a registry with three tools on the deployment scope and one
// scope per mode below it:
//
//   - add: concurrency-safe, {x, y} → {sum} (an object output schema);
//   - greet: {name} → a string (a non-object output schema);
//   - write: exclusive, no output schema; counts the times its body ran.
type fixture struct {
	reg    *registry.Registry
	exec   *executor.Executor
	writes atomic.Int64
}

func newFixture(t *testing.T, cfg executor.Config) *fixture {
	t.Helper()
	f := &fixture{reg: registry.New()}
	require.NoError(t, f.reg.Register(registry.Deployment, registry.Tool{
		Name: "add", Description: "Add two numbers.",
		InputSchema: json.RawMessage(addSchema), OutputSchema: json.RawMessage(sumSchema),
		ConcurrencySafe: true,
		Body: func(_ context.Context, in api.Input) (api.Output, error) {
			var a struct{ X, Y float64 }
			if err := json.Unmarshal(in.Args, &a); err != nil {
				return api.Output{}, err
			}
			return api.ValueOutput(map[string]float64{"sum": a.X + a.Y})
		},
	}))
	require.NoError(t, f.reg.Register(registry.Deployment, registry.Tool{
		Name: "greet", Description: "Greet someone.",
		InputSchema: json.RawMessage(greetSchema), OutputSchema: json.RawMessage(`{"type":"string"}`),
		ConcurrencySafe: true,
		Body: func(_ context.Context, in api.Input) (api.Output, error) {
			var a struct{ Name string }
			if err := json.Unmarshal(in.Args, &a); err != nil {
				return api.Output{}, err
			}
			return api.ValueOutput("hello, " + a.Name)
		},
	}))
	require.NoError(t, f.reg.Register(registry.Deployment, registry.Tool{
		Name: "write", Description: "Write a file.",
		InputSchema: json.RawMessage(writeSchema),
		Body: func(context.Context, api.Input) (api.Output, error) {
			f.writes.Add(1)
			return api.ValueOutput(map[string]bool{"ok": true})
		},
	}))
	for _, m := range []api.Mode{api.ModeNative, api.ModePTC, api.ModeBoth} {
		require.NoError(t, f.reg.NewScope(string(m), registry.Deployment))
		require.NoError(t, f.reg.DeclareMode(string(m), m))
	}
	var err error
	f.exec, err = executor.New(f.reg, cfg)
	require.NoError(t, err)
	return f
}

// connect starts a server for scope and returns a client session of the
// official SDK connected to it over in-memory transports.
func connect(t *testing.T, e *executor.Executor, scope, protocol string) *mcp.ClientSession {
	t.Helper()
	srv, err := mcpserver.New(e, scope, mcpserver.Options{})
	require.NoError(t, err)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	require.NoError(t, err)
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, cs.Close())
		_ = ss.Wait()
	})
	return cs
}

// callTool calls a tool with raw JSON arguments.
func callTool(t *testing.T, cs *mcp.ClientSession, name, args string) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	require.NoError(t, err)
	return res
}

// text returns the text of a result's only content.
func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.Len(t, res.Content, 1)
	tc, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok, "content is %T", res.Content[0])
	return tc.Text
}

// errorMeta decodes a failed result's _meta["ptcx/error"].
func errorMeta(t *testing.T, res *mcp.CallToolResult) mcpserver.ErrorMeta {
	t.Helper()
	raw, err := json.Marshal(res.Meta[mcpserver.MetaError])
	require.NoError(t, err)
	var m mcpserver.ErrorMeta
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.Close()
	os.Exit(code)
}

func sharedRuntime(t *testing.T) *wasmhost.Runtime { return testkit.Sandbox(t) }
