package serve

import (
	"context"
	"encoding/json"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/runners"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/serve/internal/cluster"
	"github.com/ptcx/ptcx/wasmhost"
)

// started is what a start answers: the execution this node holds (x,
// started now or the earlier one of the same idempotency key), or, in a
// cluster, the state of the key's earlier execution that another node
// holds (first, as GET shows it), x then nil.
type started struct {
	x     *execution
	first json.RawMessage
}

// start admits and starts an execution, or returns the earlier one of the
// same idempotency key.
func (s *Server) start(ctx context.Context, t *tenant, req *ExecutionRequest, body []byte) (started, *httpError) {
	return s.startID(ctx, newID(), t, req, body)
}

// startID is start with the execution's id given (a queued one's); ctx is
// the request's, for its log line (request_id). What
// it takes on the way (the tenant's admission, a keep_state session's
// turn, a workspace session) is given back, in reverse, unless the
// execution starts; once it does, the run's part goes back as the run ends
// or parks (run) and the rest as it settles (settleRun).
func (s *Server) startID(reqCtx context.Context, id string, t *tenant, req *ExecutionRequest, body []byte) (started, *httpError) {
	if req.Scope != "" {
		if _, err := t.exec.Registry().Mode(req.Scope); err != nil {
			return started{}, badRequest("field scope", err)
		}
	}
	args, err := runCodeArgs(req)
	if err != nil {
		return started{}, badRequest("the execution request", err)
	}
	x := newExecution(id, t, body, req.IdempotencyKey, len(req.ClientTools) > 0, s.cfg.maxEvents())
	x.requestID = requestID(reqCtx)
	x.asks = t.mayAsk(req.Scope) // approval.go
	if prev := s.table.ByKey(t.name, req.IdempotencyKey); prev != nil && s.local(t.name, prev.id) == prev {
		return s.same(prev, x)
	}
	// In a cluster: the lease, and the key across the nodes
	// (internal/cluster/idempotency.go); the key is given back unless x starts.
	hold, first, herr := s.enter(x, req.Wait)
	if first != nil || herr != nil {
		return started{first: first}, herr
	}
	defer hold.Release()
	var undo undo
	defer undo.run()
	x.work = t.runWork(req.Limits)
	x.work.Client = x.client || x.asks
	k, herr := s.admit(t, x.work)
	if herr != nil {
		return started{}, herr
	}
	undo.push(k.Release)
	var claim *sessionClaim // keep_state: this node's turn in the session (session_state.go)
	if req.KeepState {
		c, herr := s.states.claim(context.Background(), t, req.Scope, req.Session)
		if herr != nil {
			return started{}, herr
		}
		claim = c
		undo.push(c.abandon)
	}
	ex, ws, releaseSession := t.exec, t.ws, func() {}
	if name := workspaceState(req); name != "" && t.sess != nil {
		sws, rs, herr := t.sess.acquire(name)
		if herr != nil {
			return started{}, herr
		}
		ws, releaseSession = sws, rs
		undo.push(rs)
	}
	switch {
	case ws != t.ws:
		if ex, err = s.executorWith(s.runContext(x), t, ws, s.clientTools(t, req.ClientTools)); err != nil { // hostwork.go: charged to t
			return started{}, badRequest("field client_tools", err)
		}
	case x.client:
		if ex, err = s.clientExecutor(s.runContext(x), t, req.ClientTools); err != nil { // clienttool_cache.go
			return started{}, badRequest("field client_tools", err)
		}
	}
	x.spec = parkSpec{Scope: req.Scope, Session: workspaceState(req), ClientTools: req.ClientTools}
	ctx, cancel := context.WithCancel(s.runContext(x))
	x.cancel = cancel // before x is in the table, where DELETE can find it
	undo.push(cancel)
	prev, ok := s.table.Add(x, s.cfg.maxExecutions())
	if prev != nil {
		return s.same(prev, x)
	}
	if !ok {
		return started{}, quotaError(ReasonMaxExecutions, "the server holds %d live executions, its maximum (server.max_executions); retry later", s.cfg.maxExecutions())
	}
	undo = nil // started: what it holds is given back as it runs, parks and settles
	x.releasePending = chain(releaseSession, orNothing(k.TakePending()))
	release := k.EndRun
	if claim != nil {
		release = chain(release, claim.abandon)
	}
	scope := req.Scope
	attrs := []any{"execution", x.id, "tenant", t.name, "client_tools", len(req.ClientTools), "session", req.Session}
	if s.cfg.LogPrograms {
		attrs = append(attrs, "code", req.Code)
	}
	s.log.InfoContext(reqCtx, "execution accepted", attrs...)
	s.metrics.running.WithLabelValues(t.name).Inc()
	s.begin()
	s.runners.Start(runners.Func(func() {
		defer s.end()
		defer cancel()
		ctx := wasmhost.WithLogHook(ctx, x.logLine)
		call := executor.Call{ID: x.id, Scope: scope, Name: registry.RunCode, Args: args, Plan: req.Plan}
		if claim != nil { // a session's program is never parked (executor.Call.Session)
			call.Session = req.Session
			if x.asks {
				ctx = executor.WithCallApprover(ctx, s.liveApprover(x)) // it waits live (approval.go)
			}
			claim.prepare(ctx, ex)
			r := ex.Execute(withClaim(ctx, claim), call)
			claim.release(ctx, ex)
			s.run(ctx, x, r, nil, release)
			return
		}
		if !x.client && !x.asks { // nothing to park on: the hot path pays nothing for parking
			s.run(ctx, x, ex.Execute(ctx, call), nil, release)
			return
		}
		r, p := ex.ExecuteParkable(s.liveWaitOf(ctx, x), call, x.isClientTool) // livewait.go
		s.run(ctx, x, r, p, release)
	}))
	return started{x: x}, nil
}

// enter admits x to start: in a cluster, under the lease and with its
// idempotency key reserved across the nodes (cluster.enter,
// internal/cluster/idempotency.go); without one, at once.
func (s *Server) enter(x *execution, wait *bool) (hold *cluster.KeyHold, first json.RawMessage, herr *httpError) {
	if s.cluster == nil {
		return nil, nil, nil
	}
	return s.cluster.Enter(x, wait)
}

// undo is what a request took on its way, given back in reverse by run
// unless the request succeeded (then it is set to nil first).
type undo []func()

func (u *undo) push(f func()) { *u = append(*u, f) }

func (u undo) run() {
	for i := len(u) - 1; i >= 0; i-- {
		u[i]()
	}
}

// chain returns a function calling fs in order.
func chain(fs ...func()) func() {
	return func() {
		for _, f := range fs {
			f()
		}
	}
}

// same answers a repeated idempotency key: the earlier execution when the
// bodies match, 409 when they do not.
func (s *Server) same(prev, x *execution) (started, *httpError) {
	if prev.sum != x.sum {
		return started{}, errorf(CodeConflict, "idempotency_key %q was used by execution %s with a different request body", x.key, prev.id)
	}
	return started{x: prev}, nil
}

func (x *execution) cancelRun() {
	x.mu.Lock()
	x.cancelled = true
	cancel := x.cancel
	x.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
