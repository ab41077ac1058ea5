package mcpbridge

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

func TestOutput_valueByOutputSchema(t *testing.T) {
	structured := json.RawMessage(`{"n":1}`)
	text := func(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }
	tests := []struct {
		name      string
		res       *mcp.CallToolResult
		hasSchema bool
		want      string
	}{
		{"schema, structured", &mcp.CallToolResult{StructuredContent: structured, Content: text(`{"n":1}`)}, true, `{"n":1}`},
		{"schema, JSON text only", &mcp.CallToolResult{Content: text(` {"n":2} `)}, true, `{"n":2}`},
		{"schema, plain text", &mcp.CallToolResult{Content: text("plain")}, true, `"plain"`},
		{"no schema, text", &mcp.CallToolResult{Content: text("plain")}, false, `"plain"`},
		{"no schema, JSON text is still a string", &mcp.CallToolResult{Content: text(`{"n":2}`)}, false, `"{\"n\":2}"`},
		{"no schema, structured and text: the text", &mcp.CallToolResult{StructuredContent: structured, Content: text("two")}, false, `"two"`},
		{"no schema, structured only: its JSON as text", &mcp.CallToolResult{StructuredContent: structured}, false, `"{\"n\":1}"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := output(`upstream "up"`, "tool", tt.res, tt.hasSchema)
			require.NoError(t, err)
			require.JSONEq(t, tt.want, string(out.Value))
		})
	}
}
