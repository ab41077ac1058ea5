package ptcx

import "github.com/ptcx/ptcx/registry"

// Tool is a tool definition: written by hand with raw JSON Schemas, or built
// from a Go function by Func. It is registry.Tool, so a tool Func builds is
// what registry.Registry.Register takes, as the MCP Go SDK's AddTool[In, Out]
// and Server.AddTool share mcp.Tool. The zero values of the optional fields
// mean: input {"type": "object"}, no output schema, exclusive scheduling, no
// timeout, no finalizer. A tool Func could not build carries the reason in
// Err, which registering it returns.
type Tool = registry.Tool
