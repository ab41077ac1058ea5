// Package serve is `ptcx serve`: a multi-tenant HTTP execution service over
// the registry, the executor and one shared WebAssembly sandbox.
//
// It owns the service's configuration (Config, LoadConfig), tenants and
// their API keys, per-tenant quotas, the execution table (running, pending
// and settled executions), client-side tools, Server-Sent Events, the
// Prometheus metrics, MCP over Streamable HTTP at /mcp and graceful drain.
// The HTTP contract is docs/api.md, with the OpenAPI document openapi.yaml
// beside this file (a test checks it against the handlers both ways).
//
// Pending executions — programs waiting on a client-side tool — are held
// live (their guest instance keeps running, blocked in the tool's body),
// bounded by each tenant's max_pending quota, behind the pendingStore
// interface, so that suspending them to bytes can replace it later.
//
// It imports api, registry, executor, wasmhost, toolsfile, workspace,
// mcpserver, sdkgen, the MCP Go SDK, Prometheus client_golang and yaml.
package serve
