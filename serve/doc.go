// Package serve is `ptcx serve`: a multi-tenant HTTP execution service over
// the registry, the executor and one shared WebAssembly sandbox.
//
// It owns the service's configuration (Config, LoadConfig), tenants and
// their API keys, per-tenant quotas, the execution table (running, pending
// and settled executions), client-side tools, Server-Sent Events, the
// Prometheus metrics, MCP over Streamable HTTP at /mcp and graceful drain.
// The HTTP contract is docs/service.md, with the OpenAPI document openapi.yaml
// beside this file (a test checks it against the handlers both ways).
//
// Every way a tenant starts work is admitted by one function against the
// tenant's quotas and its shares of what the tenants share (admission.go);
// executions waiting on their client are parked to bytes (park.go), and
// programs that only wait give their instance back to the sandbox
// (executor.Config.WithParkIdle). With a store, nodes share executions
// (serve/internal/cluster, docs/cluster.md); the cluster reaches the node
// through its Node and Execution interfaces (node.go is the node's side).
//
// Self-contained pieces are packages of their own under internal/: the
// execution table (table), a tenant's quotas and admission ticket (quota)
// and compute bucket (compute), the spill directory (spill), the parked
// bytes' frame (parkfile), a cluster node's proof of its lease (fence),
// the HTTP-level errors (httperr) and the cluster's part (cluster).
//
// It imports api, registry, executor, wasmhost, toolsfile, workspace,
// mcpserver, sdkgen, serve/store, its internal packages, the MCP Go SDK,
// Prometheus client_golang and yaml (NATS through its cluster and store).
package serve
