package serve

import (
	"context"
	"net/http"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// start admits and starts an execution, or returns the earlier one of the
// same idempotency key.
func (s *Server) start(t *tenant, req *ExecutionRequest, body []byte) (*execution, *httpError) {
	return s.startID(newID(), t, req, body)
}

// startID is start with the execution's id given (a queued one's).
func (s *Server) startID(id string, t *tenant, req *ExecutionRequest, body []byte) (*execution, *httpError) {
	if req.Scope != "" {
		if _, err := t.exec.Registry().Mode(req.Scope); err != nil {
			return nil, badRequest("field scope", err)
		}
	}
	args, err := req.runCodeArgs()
	if err != nil {
		return nil, badRequest("the execution request", err)
	}
	x := newExecution(id, t, body, req.IdempotencyKey, len(req.ClientTools) > 0, s.cfg.maxEvents())
	if prev := s.table.getByKey(t.name, req.IdempotencyKey); prev != nil && s.local(t.name, prev.id) == prev {
		return s.same(prev, x)
	}
	// In a cluster: the lease, and the key across the nodes
	// (cluster_idempotency.go); the key is given back unless x starts.
	hold, herr := s.enter(x, req.Wait)
	if herr != nil {
		return nil, herr
	}
	defer hold.release()
	var claim *sessionClaim // keep_state: this node's turn in the session (session_state.go)
	if req.KeepState {
		c, herr := s.states.claim(context.Background(), t, req.Scope, req.Session)
		if herr != nil {
			return nil, herr
		}
		claim = c
	}
	release, herr := t.admit()
	if herr != nil {
		claim.abandon()
		return nil, herr
	}
	if claim != nil {
		release = chain(release, claim.abandon)
	}
	releasePending := func() {}
	if x.client {
		rp, ok := s.pending.reserve(t.name, t.maxPending)
		if !ok {
			release()
			return nil, quotaError(ReasonMaxPending, "tenant %s has %d executions with client tools live, its quota (quotas.max_pending); answer or cancel one first", t.name, t.maxPending)
		}
		releasePending = rp
	}
	ex, ws, releaseSession := t.exec, t.ws, func() {}
	if req.Session != "" && t.sess != nil {
		sws, rs, herr := t.sess.acquire(req.Session)
		if herr != nil {
			releasePending()
			release()
			return nil, herr
		}
		ws, releaseSession = sws, rs
	}
	if x.client || ws != t.ws {
		tools := make([]registry.Tool, len(req.ClientTools))
		for i, ct := range req.ClientTools {
			tools[i] = s.clientTool(x, ct, t.pendingTimeout)
		}
		if ex, err = t.executorWith(ws, tools); err != nil {
			releaseSession()
			releasePending()
			release()
			return nil, badRequest("field client_tools", err)
		}
	}
	releasePending = chain(releaseSession, releasePending)
	x.spec = parkSpec{Scope: req.Scope, Session: req.Session, ClientTools: req.ClientTools}
	x.releasePending = releasePending
	ctx, cancel := context.WithCancel(s.runContext(x))
	x.cancel = cancel // before x is in the table, where DELETE can find it
	prev, ok := s.table.add(x, s.cfg.maxExecutions())
	if !ok || prev != nil {
		cancel()
		releasePending()
		release()
		if prev != nil {
			return s.same(prev, x)
		}
		return nil, quotaError(ReasonMaxExecutions, "the server holds %d live executions, its maximum (server.max_executions); retry later", s.cfg.maxExecutions())
	}
	scope := req.Scope
	attrs := []any{"execution", x.id, "tenant", t.name, "client_tools", len(req.ClientTools), "session", req.Session}
	if s.cfg.LogPrograms {
		attrs = append(attrs, "code", req.Code)
	}
	s.log.Info("execution accepted", attrs...)
	s.metrics.running.WithLabelValues(t.name).Inc()
	s.begin()
	go func() {
		defer s.end()
		defer cancel()
		ctx := wasmhost.WithLogHook(ctx, x.logLine)
		call := executor.Call{ID: x.id, Scope: scope, Name: registry.RunCode, Args: args}
		if claim != nil { // a session's program is never parked (executor.Call.Session)
			call.Session = req.Session
			claim.prepare(ctx, ex)
			r := ex.Execute(withClaim(ctx, claim), call)
			claim.release(ctx, ex)
			s.run(ctx, x, r, nil, release)
			return
		}
		if !x.client { // nothing to park on: the hot path pays nothing for parking
			s.run(ctx, x, ex.Execute(ctx, call), nil, release)
			return
		}
		r, p := ex.ExecuteParkable(ctx, call, x.isClientTool)
		s.run(ctx, x, r, p, release)
	}()
	return x, nil
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
func (s *Server) same(prev, x *execution) (*execution, *httpError) {
	if prev.sum != x.sum {
		return nil, errorf(http.StatusConflict, CodeConflict, "idempotency_key %q was used by execution %s with a different request body", x.key, prev.id)
	}
	return prev, nil
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
