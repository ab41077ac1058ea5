package executor

import "context"

// callApproverKey carries an Approver set by WithCallApprover.
type callApproverKey struct{}

// WithCallApprover returns a copy of ctx under which a call that needs
// approval, and every nested call of a run_code program started under it,
// is asked of a instead of the configured approver (Config.WithApprover).
// It is the seam for an approver that belongs to the caller rather than to
// the deployment: mcpserver asks the MCP client (elicitation) when the
// client can answer, and leaves ctx alone, so that the deployment's approver
// decides, when it cannot. A nil a changes nothing.
func WithCallApprover(ctx context.Context, a Approver) context.Context {
	if a == nil {
		return ctx
	}
	return context.WithValue(ctx, callApproverKey{}, a)
}

// approve is phase 5: a call a listener asked about continues only when the
// approver allows it once.
func (x *execution) approve(ctx context.Context, question string) bool {
	a := x.e.cfg.approver
	if ca, ok := ctx.Value(callApproverKey{}).(Approver); ok {
		a = ca
	}
	if d, ok := takeParkedDecision(x); ok { // decided while the run was parked (park_approval.go)
		if !d.Approve {
			x.fail(denied("rejected by the approver", d.Reason))
		}
		return d.Approve
	}
	if a == nil {
		x.fail(denied("approval required but no approver is configured", question))
		return false
	}
	if pa, ok := a.(parkApprover); ok {
		if !x.holdForApproval(ctx, question) {
			msg := "approval required, and this call cannot wait for one here"
			if question != "" {
				msg += " (" + question + ")"
			}
			x.fail(denied(msg, pa.elsewhere))
		}
		return false
	}
	var (
		got    Approval
		reason string
	)
	err := safely(func() (err error) { got, reason, err = a.Approve(ctx, x.req, question); return err })
	switch {
	case err != nil:
		x.fail(denied("approval failed", err.Error()))
		return false
	case ctx.Err() != nil:
		x.fail(denied("approval was cancelled", reason))
		return false
	case got != ApproveOnce:
		x.fail(denied("rejected by the approver", reason))
		return false
	}
	return true
}

// MayAsk reports whether a nested call of a run_code program in scope may
// be put to the approver: the executor has pre-execute listeners (any may
// answer Ask), or a tool bindable there declares a data-flow rule that
// asks (policy.Accepts.OnViolation "ask") or needs approval
// (policy.Declaration.NeedsApproval). A host that parks programs only
// where they may wait (ExecuteParkable costs a check at every quiescent
// point) asks it before it starts one; false means no call of the program
// can ask. A scope that does not resolve reports false.
func (e *Executor) MayAsk(scope string) bool {
	if len(e.cfg.pre) > 0 {
		return true
	}
	if scope == "" {
		scope = deploymentScope
	}
	bindable, err := e.reg.Bindable(scope)
	if err != nil {
		return false
	}
	for _, b := range bindable {
		res := e.resolve(scope, b.Name, true)
		if res.Definition == nil {
			continue
		}
		if p := res.Definition.Policy(); p != nil && (p.Ask() || p.NeedsApproval()) {
			return true
		}
	}
	return false
}
