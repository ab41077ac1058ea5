package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/serve/internal/cluster"
)

// Approvals. A nested call that asks (a data-flow rule with on_violation
// "ask", a listener's Ask) parks its execution as a client tool's call
// does (park.go, executor.ParkApprovals): the pending item is
// {"id", "kind": "approval", "name", "arguments", "reason", "labels"}, the
// SSE event approval_pending, and POST /v1/executions/{id}/approvals
// decides it. Approved, the call runs and the program continues where it
// stopped; declined (or past the tenant's quotas.approval_timeout_ms), the
// program's promise rejects with DENIED and the reason. A keep_state
// program, which never parks, waits live (liveApprover). /v1/calls and
// /mcp cannot wait for a person: there such a call is DENIED, naming
// /v1/executions (approvalsElsewhere). An execution whose program may ask
// (executor.Executor.MayAsk) is counted against max_pending, as one with
// client tools is.

// approvalsElsewhere ends the DENIED message of a call that asks where no
// one can be asked.
const approvalsElsewhere = "only an execution (POST /v1/executions) can wait for a person's decision: run the program there, " +
	"and decide with POST /v1/executions/{id}/approvals"

// mayAsk reports whether a program of t's in scope (one that resolves:
// startID checked it) may ask (executor.Executor.MayAsk), worked out once
// per scope: t's tools do not change once it is made, and reading them
// all costs tens of microseconds (BenchmarkExecutor_MayAsk).
func (t *tenant) mayAsk(scope string) bool {
	if v, ok := t.asks.Load(scope); ok {
		return v.(bool)
	}
	v := t.exec.MayAsk(scope)
	t.asks.Store(scope, v)
	return v
}

// approvalPending builds the pending item of a call that asks.
func approvalPending(id, tool string, args json.RawMessage, reason string, label *api.Label) PendingCall {
	return PendingCall{ID: id, Kind: KindApproval, Name: tool, Arguments: append(json.RawMessage(nil), args...), Reason: reason, Labels: label}
}

// isApproval reports whether pc waits for a decision.
func (pc *pendingCall) isApproval() bool { return pc.call.Kind == KindApproval }

// decisionAnswer is the executor's answer for a decision.
func decisionAnswer(d Decision) executor.Answer {
	return executor.Answer{Decision: &executor.ApprovalDecision{Approve: d.Approve, Reason: d.Reason}}
}

// decisionResult is how a record keeps a decision given while parked,
// among the tool results given (parkedState): ok with the reason as its
// value, or failed with it as its message. decisionOf reads it back.
func decisionResult(d Decision) ToolResult {
	if d.Approve {
		v, _ := json.Marshal(d.Reason)
		return ToolResult{ID: d.ID, OK: true, Value: v}
	}
	return ToolResult{ID: d.ID, Error: &ToolResultError{Message: d.Reason}}
}

func decisionOf(r ToolResult) Decision {
	d := Decision{ID: r.ID, Approve: r.OK}
	if r.OK {
		_ = json.Unmarshal(r.Value, &d.Reason)
	} else if r.Error != nil {
		d.Reason = r.Error.Message
	}
	return d
}

// timedOut is the decision an approval gets when nobody decided it by
// its expiry.
func timedOut(pc *pendingCall) Decision {
	return Decision{ID: pc.call.ID, Reason: fmt.Sprintf("no decision came before the approval expired at %s (quotas.approval_timeout_ms)",
		pc.expires.UTC().Format(time.RFC3339))}
}

// DecodeApprovals decodes and checks a POST /v1/executions/{id}/approvals
// body.
func DecodeApprovals(data []byte) (*ApprovalsRequest, error) {
	var req ApprovalsRequest
	if err := decodeStrict(data, &req); err != nil {
		return nil, err
	}
	if len(req.Decisions) == 0 {
		return nil, errors.New("field decisions: required, at least one {\"id\", \"approve\", \"reason\"}")
	}
	seen := make(map[string]bool, len(req.Decisions))
	for i, d := range req.Decisions {
		switch {
		case d.ID == "":
			return nil, fmt.Errorf("field decisions[%d].id: required (a pending approval's id)", i)
		case seen[d.ID]:
			return nil, fmt.Errorf("field decisions[%d].id: %q is decided twice in one request", i, d.ID)
		case len(d.Reason) > maxReasonBytes:
			return nil, fmt.Errorf("field decisions[%d].reason: %d bytes, over the limit of %d", i, len(d.Reason), maxReasonBytes)
		}
		seen[d.ID] = true
	}
	return &req, nil
}

// maxReasonBytes bounds a decision's reason, which reaches the program
// in its DENIED message.
const maxReasonBytes = 4096

func (s *Server) postApprovals(w http.ResponseWriter, r *http.Request, t *tenant) {
	body, herr := readBody(w, r, s.cfg.maxBodyBytes())
	if herr != nil {
		writeError(w, herr)
		return
	}
	began := time.Now()
	req, err := DecodeApprovals(body)
	s.chargeHostWork(t, time.Since(began))
	if err != nil {
		writeError(w, badRequest("the approvals", err))
		return
	}
	if s.cluster != nil && s.local(t.name, r.PathValue("id")) == nil {
		s.cluster.Forward(r.Context(), w, cluster.NodeRequest{Op: cluster.OpApprovals, Tenant: t.name, ID: r.PathValue("id"), Decisions: req.Decisions})
		return
	}
	x := s.execution(w, r, t)
	if x == nil {
		return
	}
	st, herr := s.apply(r.Context(), x, cluster.NodeRequest{Op: cluster.OpApprovals, Decisions: req.Decisions})
	if herr != nil {
		writeError(w, herr)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// decide applies decisions to x's pending approvals, all or none: an id
// that is a client tool's call is 400 (tool_results answers it), one
// decided before is a no-op when decided the same way and 409 otherwise,
// one x never asked about 400. It reports how many it applied, and
// whether x is parked with every call answered now: the caller resumes
// it.
func (x *execution) decide(ds []Decision) (int, bool, *httpError) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var todo []*pendingCall
	var apply []Decision
	for _, d := range ds {
		pc := x.pendingByIDLocked(d.ID)
		switch {
		case pc != nil && !pc.isApproval():
			if _, ok := x.decided[d.ID]; ok {
				break // an approved client tool's call, now the client's: the decision is checked below
			}
			return 0, false, errorf(CodeBadRequest, "%s is a client tool's call (%s), not an approval: answer it with POST /v1/executions/%s/tool_results", d.ID, pc.call.Name, x.id)
		case pc != nil && pc.isApproval():
			todo, apply = append(todo, pc), append(apply, d)
			continue
		}
		prev, ok := x.decided[d.ID]
		switch {
		case !ok:
			return 0, false, errorf(CodeBadRequest, "execution %s has no approval %s pending or decided (the pending items of kind \"approval\" are its approvals)", x.id, d.ID)
		case prev.Approve != d.Approve || prev.Reason != d.Reason:
			return 0, false, errorf(CodeConflict, "approval %s was decided already (approve: %t, reason: %q): a decision stands", d.ID, prev.Approve, prev.Reason)
		}
	}
	for i, pc := range todo {
		d := apply[i]
		x.settleApprovalLocked(pc, d)
		x.emitLocked(EventResult, map[string]any{"id": d.ID, "kind": KindApproval, "ok": d.Approve})
	}
	due := x.resumeDueLocked()
	if len(todo) > 0 {
		if len(x.pending) == 0 && x.status == StatusPending && !due {
			x.status = StatusRunning
		}
		x.notifyLocked()
	}
	return len(todo), due, nil
}

// settleApprovalLocked records d for pc and takes pc off the pending
// calls; x.mu is held.
func (x *execution) settleApprovalLocked(pc *pendingCall, d Decision) {
	if x.decided == nil {
		x.decided = make(map[string]Decision)
	}
	x.decided[pc.call.ID] = d
	if pc.decision != nil {
		pc.decision <- d // buffered, written once: a live approval (liveApprover)
	} else {
		x.answers[pc.parkID] = decisionAnswer(d)
		x.given[pc.parkID] = decisionResult(d)
	}
	for i, p := range x.pending {
		if p == pc {
			x.pending = append(x.pending[:i], x.pending[i+1:]...)
			break
		}
	}
}

// pendingByIDLocked is x's pending call id, or nil; x.mu is held.
func (x *execution) pendingByIDLocked(id string) *pendingCall {
	for _, p := range x.pending {
		if p.call.ID == id {
			return p
		}
	}
	return nil
}

// liveApprover asks for a decision on x's behalf where its program cannot
// park (a keep_state program, or one that waits live: waitLive): the call
// is pending as a parked approval is, and the program waits, its instance
// held, until a decision comes, the approval expires (declined) or the
// run ends.
func (s *Server) liveApprover(x *execution) executor.Approver {
	return executor.ApproverFunc(func(ctx context.Context, req executor.Request, question string) (executor.Approval, string, error) {
		if !req.Nested {
			return executor.Reject, approvalsElsewhere, nil
		}
		pc := &pendingCall{call: approvalPending(req.ID, req.Tool, req.Args, question, nil),
			expires: time.Now().Add(x.tenant.approvalTimeout), decision: make(chan Decision, 1)}
		x.addPending(pc)
		timer := time.NewTimer(time.Until(pc.expires))
		defer timer.Stop()
		var d Decision
		select {
		case d = <-pc.decision:
		case <-timer.C:
			d = timedOut(pc)
			x.mu.Lock()
			if x.pendingByIDLocked(pc.call.ID) == pc {
				x.settleApprovalLocked(pc, d)
				x.emitLocked(EventExpired, map[string]string{"id": pc.call.ID})
			} else {
				d = <-pc.decision // decided as it expired
			}
			x.mu.Unlock()
		case <-ctx.Done():
			x.removePending(pc)
			return executor.Reject, "the run ended while the call waited for a decision", nil
		}
		x.removePending(pc)
		if d.Approve {
			return executor.ApproveOnce, d.Reason, nil
		}
		return executor.Reject, d.Reason, nil
	})
}
