package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpserver"
	"github.com/ptcx/ptcx/registry"
)

// A ptc-mode server advertises only run_code, and refuses a direct call to
// any other tool with the executor's UNKNOWN_TOOL, naming the route.
func ExampleNew() {
	ctx := context.Background()
	reg := registry.New()
	_ = reg.DeclareMode(registry.Deployment, api.ModePTC)
	_ = reg.Register(registry.Deployment, registry.Tool{
		Name: "write",
		Body: func(context.Context, api.Input) (api.Output, error) {
			return api.ValueOutput("written")
		},
	})
	e, _ := executor.New(reg, executor.NewConfig())
	srv, _ := mcpserver.New(e, registry.Deployment, mcpserver.Options{})

	// A host serves stdio with srv.Run(ctx, mcpserver.StdioTransport(os.Stdin, os.Stdout)).
	st, ct := mcp.NewInMemoryTransports()
	ss, _ := srv.Connect(ctx, st, nil)
	cs, _ := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, nil).Connect(ctx, ct, nil)
	defer func() { _ = cs.Close(); _ = ss.Wait() }()

	list, _ := cs.ListTools(ctx, nil)
	for _, t := range list.Tools {
		fmt.Println("advertised:", t.Name)
	}
	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: json.RawMessage(`{}`)})
	fmt.Println("isError:", res.IsError)
	text := res.Content[0].(*mcp.TextContent).Text
	fmt.Println(strings.SplitN(text, " — ", 2)[0])
	// Output:
	// advertised: run_code
	// isError: true
	// UNKNOWN_TOOL: unknown tool "write": only run_code is callable directly
}
