package serve

import (
	"context"
	"fmt"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/serve/internal/cluster"
	"github.com/ptcx/ptcx/serve/internal/fence"
)

// Fencing, on the node's side (docs/cluster.md, "Fencing";
// serve/internal/fence, the proof; internal/cluster/fence.go, what the cluster does
// about a lapse): in a cluster, the node acts for an execution — answers
// from its copy, resumes it, writes its parked bytes, dispatches its calls
// — only while the epoch it runs under holds. Without a store every check
// here passes.

// local returns tenant's execution id when this node answers for it from
// its own copy: without a store, whenever it holds it; in a cluster, only
// while it is current (else nil: the store's record or its owner answers).
func (s *Server) local(tenant, id string) *execution {
	x := s.table.Get(tenant, id)
	if x == nil || s.cluster == nil || s.cluster.Current(x) {
		return x
	}
	return nil
}

// runContext is the context an execution's run (or resumed run) starts
// from: in a cluster it carries the execution's epoch, which the fence
// guard and the session store check; and x itself, where its client
// tools' bodies find it (execOf).
func (s *Server) runContext(x *execution) context.Context {
	ctx := context.WithValue(context.Background(), execKey{}, x)
	if s.cluster == nil {
		return ctx
	}
	return fence.WithTicket(ctx, s.cluster.Fence, x.epoch.Load())
}

// mayResume refuses, with a 503 to retry, the resume of an execution
// this node does not act for now.
func (s *Server) mayResume(x *execution) *httpError {
	if s.cluster == nil || s.cluster.Current(x) {
		return nil
	}
	return unavailable(CodeOwnerUnavailable, "execution %s is not resumed here now: %s; retry (its owner, or the node that took it over, continues it)",
		x.id, s.cluster.Fence.Refusal())
}

// mayWrite is nil while this node may write x's state to the store.
func (s *Server) mayWrite(x *execution) error {
	if s.cluster == nil || s.cluster.Current(x) {
		return nil
	}
	return fmt.Errorf("%w: %s", cluster.ErrFenced, s.cluster.Fence.Refusal())
}

// withFence gives a cluster node's executors the fence as a guard: the
// last phase before a call's body is dispatched (executor's phase 6, on
// every path, the inline one included), so a refused call fails DENIED
// and its body never runs. Without a store it adds nothing.
func (s *Server) withFence(cfg executor.Config) executor.Config {
	if s.cfg.Store == nil || s.cfg.Store.Kind == storeMemory {
		return cfg
	}
	return cfg.WithGuard("", s.fenceGuard)
}

// fenceGuard refuses every call while the node cannot prove its lease:
// a call of an execution's run by the epoch its context carries, any
// other (a direct call, /mcp) by the node's lease alone.
func (s *Server) fenceGuard(ctx context.Context, _ executor.Request) (string, error) {
	if t := fence.TicketOf(ctx); t != nil {
		if t.Holds() {
			return "", nil
		}
		return t.Refusal() + ": the call was not dispatched", nil
	}
	c := s.cluster
	if c == nil || c.Fence.Live() {
		return "", nil
	}
	return c.Fence.Refusal() + ": the call was not dispatched", nil
}
