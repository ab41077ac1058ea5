package main

import "github.com/modelcontextprotocol/go-sdk/mcp"

// builtinAnnotations are the MCP hints of the built-in workspace tools,
// listed by ptcx mcp wherever the mode advertises them (native, both): the
// readers are read-only; write and edit change files (write replaces a
// whole file, so doing it twice is the same as once); bash can do anything,
// the network included.
func builtinAnnotations() map[string]*mcp.ToolAnnotations {
	yes, no := true, false
	reader := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}
	return map[string]*mcp.ToolAnnotations{
		"read":  reader,
		"list":  reader,
		"glob":  reader,
		"grep":  reader,
		"write": {DestructiveHint: &yes, IdempotentHint: true, OpenWorldHint: &no},
		"edit":  {DestructiveHint: &yes, OpenWorldHint: &no},
		"bash":  {DestructiveHint: &yes, OpenWorldHint: &yes},
	}
}
