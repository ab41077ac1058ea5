package mcpbridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptcx/ptcx/api"
)

// output turns an upstream's tool result into a registry output.
//
//   - isError: a TOOL_FAILED error whose message is the upstream's text;
//   - a tool with an output schema: its structuredContent is the value,
//     shown to the model as the executor renders any value; without it, the
//     text of its contents when that text is JSON (servers that predate
//     structuredContent send their structured result as text);
//   - otherwise the text of the contents joined by newlines, a non-text item
//     as a short placeholder ("[image/png, 1234 bytes]"), as a JSON string:
//     a tool without an output schema is typed Promise<string>, so its
//     value is always its text (the JSON of a structuredContent it sends
//     with no content at all).
func output(label, tool string, res *mcp.CallToolResult, hasOutputSchema bool) (api.Output, error) {
	text := joinContent(res.Content)
	if res.IsError {
		if text == "" {
			text = fmt.Sprintf("%s: %s failed without saying why", label, tool)
		}
		return api.Output{}, &api.Error{Code: api.CodeToolFailed, Message: text}
	}
	if !hasOutputSchema && len(res.Content) == 0 && res.StructuredContent != nil {
		v, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return api.Output{}, fmt.Errorf("%s: the structured result of %s is not JSON: %w", label, tool, err)
		}
		text = string(v)
	}
	if hasOutputSchema && res.StructuredContent != nil {
		v, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return api.Output{}, fmt.Errorf("%s: the structured result of %s is not JSON: %w", label, tool, err)
		}
		return api.Output{Value: v}, nil
	}
	if hasOutputSchema {
		if t := bytes.TrimSpace([]byte(text)); json.Valid(t) {
			return api.Output{Value: t}, nil
		}
	}
	v, err := json.Marshal(text)
	if err != nil {
		return api.Output{}, err
	}
	return api.Output{Value: v, Text: text}, nil
}

// joinContent joins the text of the contents, one item per line.
func joinContent(items []mcp.Content) string {
	parts := make([]string, 0, len(items))
	for _, c := range items {
		parts = append(parts, contentText(c))
	}
	return strings.Join(parts, "\n")
}

// contentText is an item's text, or a placeholder saying what it is.
func contentText(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return "[" + sized(c.MIMEType, "image", len(c.Data)) + "]"
	case *mcp.AudioContent:
		return "[" + sized(c.MIMEType, "audio", len(c.Data)) + "]"
	case *mcp.ResourceLink:
		return fmt.Sprintf("[resource link: %s]", c.URI)
	case *mcp.EmbeddedResource:
		r := c.Resource
		switch {
		case r == nil:
			return "[resource]"
		case r.Blob != nil:
			return fmt.Sprintf("[resource %s: %s]", r.URI, sized(r.MIMEType, "binary", len(r.Blob)))
		default:
			return r.Text
		}
	}
	return "[content of an unsupported kind]"
}

// sized is "mime, n bytes", with kind standing in for a missing MIME type.
func sized(mime, kind string, n int) string {
	if mime == "" {
		mime = kind
	}
	return fmt.Sprintf("%s, %d bytes", mime, n)
}
