// Package cluster is the cluster's part of ptcx serve (docs/cluster.md):
// with a store shared beyond one process (dir or NATS), a node writes the
// records of the executions it owns, renews its lease and proves it to
// itself (serve/internal/fence), reaps or takes over what lost nodes
// left, reserves idempotency keys across nodes, forwards requests for
// another node's executions and answers theirs, publishes events and
// serves the overflow queue.
//
// It sits behind a wall: it reaches the node it is part of only through
// Node, and the node's executions only through Execution (package serve
// implements both, in serve/node.go), and answers with
// serve/internal/httperr's errors and serve/protocol's wire. It imports
// api, serve/store, serve/protocol, serve/internal/fence,
// serve/internal/httperr and NATS; never package serve.
package cluster
