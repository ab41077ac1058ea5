package mcpserver

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// changeMarker is the name of the placeholder tool NotifyToolsChanged adds
// to the SDK's (unused) tool set and removes at once: the SDK sends
// notifications/tools/list_changed only when that set changes. No client
// ever sees it: the router answers tools/list and tools/call itself.
const changeMarker = "ptcx_tools_changed"

// NotifyToolsChanged tells every client of s that its tool list changed
// (notifications/tools/list_changed, which the SDK sends about 10 ms later,
// one for several changes close together), so that it lists the tools
// again and sees a new tool and run_code's new description: call it after
// registering tools on the server's scope (ptcx mcp does when a bridged
// upstream changes its tools). s must come from New.
func NotifyToolsChanged(s *mcp.Server) {
	s.AddTool(&mcp.Tool{Name: changeMarker, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, errUnreachable
		})
	s.RemoveTools(changeMarker)
}

// errUnreachable is the placeholder's answer, were the SDK ever to call it.
var errUnreachable = errors.New("mcpserver: the tools-changed placeholder is not a tool")
