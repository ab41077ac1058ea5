package mcpserver

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptcx/ptcx/api"
)

// list answers tools/list with the scope's advertised surface, computed now:
// a tool registered (or a describer installed) after New is seen by the next
// list. Every tool is in the one page; a cursor can only be one the server
// never issued.
func (r *router) list(req *mcp.ListToolsRequest) (*mcp.ListToolsResult, error) {
	if req.Params != nil && req.Params.Cursor != "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor: ptcx lists every tool in one page"}
	}
	schemas, err := r.e.Registry().WireSchemas(r.scope)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	tools := mcpTools(schemas)
	if r.opts.Annotations != nil {
		for _, t := range tools {
			t.Annotations = r.opts.Annotations(t.Name)
		}
	}
	return &mcp.ListToolsResult{Tools: tools}, nil
}

// mcpTools renders registry schemas as MCP tool definitions. The schemas are
// passed as raw JSON, exactly as registered.
func mcpTools(schemas []api.Schema) []*mcp.Tool {
	out := make([]*mcp.Tool, 0, len(schemas))
	for _, s := range schemas {
		t := &mcp.Tool{
			Name:        s.Name,
			Description: s.Description,
			InputSchema: json.RawMessage(s.InputSchema),
		}
		if objectSchema(s.OutputSchema) {
			t.OutputSchema = json.RawMessage(s.OutputSchema)
		}
		out = append(out, t)
	}
	return out
}

// objectSchema reports whether a schema declares "type": "object", the only
// output schema MCP allows. Anything else (none, another type, a list of
// types, a boolean schema) is not advertised.
func objectSchema(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	var s struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	var typ string
	return json.Unmarshal(s.Type, &typ) == nil && typ == "object"
}
