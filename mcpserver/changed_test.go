package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpserver"
	"github.com/ptcx/ptcx/registry"
)

func TestNotifyToolsChanged_clientListsTheNewTool(t *testing.T) {
	f := newFixture(t, executor.NewConfig())
	srv, err := mcpserver.New(f.exec, "both", mcpserver.Options{})
	require.NoError(t, err)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	require.NoError(t, err)
	changed := make(chan struct{}, 10)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer func() { require.NoError(t, cs.Close()); _ = ss.Wait() }()
	require.True(t, cs.InitializeResult().Capabilities.Tools.ListChanged)

	require.NoError(t, f.reg.Register(registry.Deployment, registry.Tool{
		Name: "late", Body: func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput("late") },
	}))
	mcpserver.NotifyToolsChanged(srv)
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		require.NotEqual(t, "ptcx_tools_changed", tool.Name, "the placeholder is never listed")
	}
	require.Contains(t, names, "late")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ptcx_tools_changed", Arguments: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.True(t, res.IsError, "the placeholder cannot be called: the executor does not know it")
	require.Equal(t, api.CodeUnknownTool, errorMeta(t, res).Code)
}
