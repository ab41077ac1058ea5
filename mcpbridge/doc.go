// Package mcpbridge brings the tools of any MCP server into a ptcx registry
// ("code mode" for MCP): Connect starts the server as a subprocess over
// stdio, imports its tools under a prefix, and each imported tool's body
// calls the server. A run_code program can then call several upstream tools
// in one run, in parallel where the server marks them read-only.
//
// # Import
//
// Each upstream tool is registered as "<prefix>.<tool>" with the upstream's
// description, input schema and output schema; a tool that declares no
// output schema gets {"type": "string"} (its value is its text, so a
// program sees Promise<string>). MCP's readOnlyHint annotation makes it
// concurrency-safe. Names that are not valid ptcx tool names are sanitised
// deterministically, and a tool whose schema the registry cannot compile is
// skipped; both are reported by Bridge.Warnings rather than failing the
// bridge. Two instances of one server coexist under two prefixes
// (Upstream.Prefix); a derived prefix is never a launcher's name (npx, node,
// python, uv, docker...) nor a generic one (index, main, server, dist, mcp...).
//
// The tool list is read at Connect, and again whenever the upstream sends
// notifications/tools/list_changed (folded: one listing at a time): new
// tools are registered, tools it no longer lists stay registered (a
// registry cannot forget a tool) but a call to one fails with UNKNOWN_TOOL,
// and a tool it lists again works again. A tool whose schema changed keeps
// the one it was registered with; a tool skipped with a warning stays
// skipped. Upstream.MaxTools (default 1000) bounds
// the tools registered over the bridge's life. Upstream.OnToolsChanged
// reports each refresh.
//
// # Results
//
// For a tool with an output schema, an upstream result's structuredContent
// is the tool's value (or its text, when that is JSON and there is no
// structuredContent). Otherwise the value is the text contents joined by
// newlines (a non-text item shows as a placeholder such as
// "[image/png, 1234 bytes]"). isError is a TOOL_FAILED error whose message
// is the upstream's text.
//
// # Failures
//
// Everything that can go wrong with the upstream is a tool error with a
// clear message, never a hang or a panic:
//
//   - it exits (a crash): the call in flight fails with how it exited and
//     the end of its stderr, and the next call starts it again (lazily; an
//     upstream that keeps dying before answering anything is restarted with
//     a growing delay, and calls in between say so);
//   - it does not answer within Upstream.Timeout: TOOL_TIMEOUT, the request
//     is cancelled upstream (notifications/cancelled), and if it does not
//     answer a ping either it is stopped and the next call starts it again;
//   - it writes something that is not a JSON-RPC message to stdout: the
//     session is over (nothing after garbage can be trusted), the call fails
//     quoting what it wrote, and the next call starts it again;
//   - it cannot be started or does not complete the handshake: Connect (or
//     the restarting call) fails with the end of its stderr.
//
// Notifications the upstream sends of its own accord are budgeted (never
// its requests, whose answers it waits for) (docs/security.md, "MCP", states the budget): past it they are
// dropped unread and counted (Bridge.Dropped), so that an upstream flooding
// them costs the host about a microsecond each instead of the SDK's
// 100-200 µs, and its answers still arrive.
//
// Cancelling a call's context cancels the request upstream. Each upstream
// runs as an internal/proc process tree, which is killed when it dies, when
// it is stopped and on Close (docs/security.md, "Tool processes", says how
// strongly each platform contains it).
//
// The package imports registry, the MCP SDK, internal/jsonrpcline,
// internal/proc (the upstream's process tree) and internal/text.
package mcpbridge
