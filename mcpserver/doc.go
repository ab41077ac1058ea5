// Package mcpserver exposes a ptcx executor as a Model Context Protocol
// server, built on the official MCP Go SDK.
//
// # What a client sees
//
// tools/list advertises exactly registry.WireSchemas of the server's scope,
// computed afresh for every request: in ptc mode a client sees only run_code
// (whose description is whatever the registry's describer renders, typically
// the generated SDK); in both mode every visible tool plus run_code; in native
// mode every visible tool. Each tool carries its input schema, and its output
// schema when that schema has "type": "object" (MCP allows no other kind).
// Every tool is listed in one page.
//
// # Every call goes through the executor
//
// No tool is registered with the SDK. A receiving middleware answers
// tools/list and tools/call itself, and hands EVERY tools/call, whatever the
// name, to executor.Execute with the raw arguments. So the executor, not the
// SDK, decides what a name means: a tool that is visible but collapsed (write
// in ptc mode) comes back as the executor's UNKNOWN_TOOL result naming the
// route through run_code, validation lists every violation, and policy,
// cancellation and notifications apply exactly as for any host. The SDK never
// validates or coerces arguments.
//
// # Results
//
// A successful call is a CallToolResult with one text content, the text the
// model is meant to see (api.Result.Text), and, when the value is a JSON
// object, the value as structuredContent. A failed call is a CallToolResult
// with isError set and the text "CODE: text" ("CODE (kind): text" for
// CODE_RUN_FAILED), so the model reads both the stable code and the message;
// _meta["ptcx/error"] carries the same facts as data: {"code", "kind",
// "violations"}. JSON-RPC errors are kept for protocol problems: a tools/list
// cursor the server never issued, an unknown scope.
//
// # Stdio
//
// mcp.IOTransport ends the session on the first line that is not a JSON-RPC
// message. StdioTransport wraps it so that such a line is answered with a
// JSON-RPC error and skipped, and the server keeps serving.
//
// The package imports executor, registry and the MCP SDK.
package mcpserver
