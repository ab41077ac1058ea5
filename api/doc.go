// Package api is the vocabulary every ptcx package shares: the stable error
// Codes and run failure Kinds, the one error type (Error, with its
// sentinels), the settled Result of a call, the Modes of a scope, the public
// view of a tool (Schema) and the Limits of one run.
//
// It owns words, not behaviour: registry, executor, wasmhost, sdkgen, the
// MCP packages, the root package ptcx and the CLI all import it, so it
// imports only the standard library and nothing of ptcx.
package api
