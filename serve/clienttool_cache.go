package serve

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// The executors of executions that declare client tools. Building one (a
// registry of the tenant's tools and the client tools, their schemas
// compiled, and ptcx.New over it) costs a quarter of a millisecond, more
// than a trivial run; most clients declare the same tools on every
// request. So a tenant keeps the executors it built over its own
// workspace, by the client tools' declaration (its JSON, hashed), the
// maxClientExecutors most recently used: an execution declaring the same
// tools runs in the same executor, as executions without client tools
// share the tenant's. The client tool bodies find their execution in the
// run's context (execOf), never in the executor, so that sharing one
// crosses nothing between executions. An executor over a named workspace
// state is built for its execution alone, as before (the state's
// workspace comes and goes).

// maxClientExecutors bounds a tenant's cached executors (tests lower it
// through export_test.go).
var maxClientExecutors = 32

// clientExecutors is a tenant's cache of executors by client tools.
type clientExecutors struct {
	mu    sync.Mutex
	m     map[[32]byte]*executor.Executor
	order [][32]byte // least recently used first
}

// get returns the cached executor of key, marking it used.
func (c *clientExecutors) get(key [32]byte) *executor.Executor {
	c.mu.Lock()
	defer c.mu.Unlock()
	ex := c.m[key]
	if ex != nil {
		c.touchLocked(key)
	}
	return ex
}

// put caches ex under key, forgetting the least recently used past the
// bound; an executor another execution cached first under key wins.
func (c *clientExecutors) put(key [32]byte, ex *executor.Executor) *executor.Executor {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[[32]byte]*executor.Executor{}
	}
	if prev := c.m[key]; prev != nil {
		c.touchLocked(key)
		return prev
	}
	for len(c.order) >= maxClientExecutors {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.m[key] = ex
	c.order = append(c.order, key)
	return ex
}

func (c *clientExecutors) touchLocked(key [32]byte) {
	for i, k := range c.order {
		if k == key {
			c.order = append(append(c.order[:i:i], c.order[i+1:]...), key)
			return
		}
	}
}

// len is how many executors are cached.
func (c *clientExecutors) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// clientExecutor returns the executor of an execution of t declaring
// tools, over the tenant's own workspace: cached, or built (charged to t)
// and cached.
func (s *Server) clientExecutor(ctx context.Context, t *tenant, tools []ClientTool) (*executor.Executor, error) {
	decl, err := json.Marshal(tools)
	if err != nil {
		return nil, err
	}
	key := sha256.Sum256(decl)
	if ex := t.clients.get(key); ex != nil {
		return ex, nil
	}
	ex, err := s.executorWith(ctx, t, t.ws, s.clientTools(t, tools)) // hostwork.go: charged to t
	if err != nil {
		return nil, err
	}
	return t.clients.put(key, ex), nil
}

// clientTools are tools' registry tools, for an executor of t.
func (s *Server) clientTools(t *tenant, tools []ClientTool) []registry.Tool {
	out := make([]registry.Tool, len(tools))
	for i, ct := range tools {
		out[i] = s.clientTool(ct, t.pendingTimeout)
	}
	return out
}

// execKey carries the execution a run is of in its context (runContext).
type execKey struct{}

// execOf returns the execution whose run ctx is of, nil outside one.
func execOf(ctx context.Context) *execution {
	x, _ := ctx.Value(execKey{}).(*execution)
	return x
}
