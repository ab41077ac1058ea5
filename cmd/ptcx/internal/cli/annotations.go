package cli

import "github.com/modelcontextprotocol/go-sdk/mcp"

// annotations are the MCP hints ptcx mcp lists: the built-in tools' (unless
// --no-builtin), and each bridged tool's as its upstream gave them.
func (e *env) annotations(builtins bool) func(tool string) *mcp.ToolAnnotations {
	var own map[string]*mcp.ToolAnnotations
	if builtins {
		own = builtinAnnotations()
	}
	return func(tool string) *mcp.ToolAnnotations {
		if a, ok := own[tool]; ok {
			return a
		}
		for _, b := range e.bridges {
			if a := b.Annotations(tool); a != nil {
				return a
			}
		}
		return nil
	}
}

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
