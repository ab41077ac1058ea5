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
// Every tool is listed in one page. The server declares tools.listChanged:
// NotifyToolsChanged sends notifications/tools/list_changed after tools
// were registered on the scope.
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
// "violations", and "policy" for a flow a data-flow rule refused}; a result
// whose label is not the lowest carries it in _meta["ptcx/labels"]. JSON-RPC errors are kept for protocol problems: a tools/list
// cursor the server never issued, an unknown scope.
//
// # Progress
//
// A run_code call whose request carries a progress token (_meta.progressToken)
// streams the program's console lines while it runs: one
// notifications/progress per line, the line as its message (cut to 2 KiB)
// and the count of lines so far as its progress. At most
// Options.MaxProgressLines lines (default DefaultMaxProgressLines) are sent
// per call, and at most 64 wait for a slow client: the program never waits
// for the client, and lines past either bound are counted in one last
// notification ("… N more console lines were not sent as progress ...").
// Every notification is sent before the call's result (the stream is
// drained for at most 5 s after the run; lines a stuck client has not taken by then are abandoned). The result carries every line
// whatever was streamed. The lines come from wasmhost.WithLogHook.
//
// # Approval
//
// A call that asks (a tool declared needs_approval, a data-flow rule with
// on_violation ask, a pre-execute listener's executor.Ask), direct or nested
// in a program, is put to the client's user through elicitation/create when
// the client declared the elicitation capability (form mode) at
// initialisation. The question's message names the tool and says why it
// asks (the reason), what a nested call carries (its labels: what its
// program had read) and its arguments (at most 512 bytes); its _meta has
// the reason under MetaReason and a nested call's labels under MetaLabels,
// as data. "accept" approves that one call, "decline" and "cancel"
// deny it (DENIED, "rejected by the approver: the MCP client's user
// declined"), and a failed request denies it with the error. A client
// without the capability, or one on the sessionless protocol (2026-07-28,
// where a server may not send requests while it serves one), leaves the
// decision to the deployment's approver (executor.Config.WithApprover), as
// does Options.NoElicitation. The seam is executor.WithCallApprover.
//
// # Annotations and the SDK
//
// Options.Annotations gives MCP hints (readOnlyHint, destructiveHint, ...)
// by tool name; ptcx mcp gives them for the built-in workspace tools. The
// typed SDK should reach the client once: either in run_code's description
// (a describer such as sdkgen.DescribeRunCode; what ptcx mcp does by
// default, since every client shows tool descriptions to the model) or in
// Options.Instructions, not both.
//
// # Sessions
//
// With Options.Sessions, each MCP connection (an *mcp.ServerSession) gets
// one run_code session (executor.Call.Session, named at its first
// run_code call): its programs share their state, as a REPL's do, and
// the session is closed when the connection ends. Two connections never
// share one. Over a transport that makes a server session per request
// (stateless Streamable HTTP) every call would start afresh: the option
// is meant for connections that last, such as stdio. Tell the model
// (executor.SessionPrompt); ptcx mcp --session appends it to run_code's
// description.
//
// # Stdio
//
// mcp.IOTransport ends the session on the first line that is not a JSON-RPC
// message. StdioTransport wraps it so that such a line is answered with a
// JSON-RPC error and skipped, and the server keeps serving. A request that
// reuses the id of one not answered yet, which the SDK would drop without
// a reply, is answered with an error naming the id (GuardHTTP does the
// same for a batch posted over Streamable HTTP).
//
// The package imports executor, registry, wasmhost (the log hook),
// internal/jsonrpcline, internal/text and the MCP SDK.
package mcpserver
