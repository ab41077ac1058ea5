package executor

import (
	"context"
	"fmt"
	"strings"

	"github.com/ptcx/ptcx/registry"
)

// policy runs phases 4 to 6: pre-execute listeners, approval, guards. The
// first denial stops the call with DENIED and its reason.
func (x *execution) policy(ctx context.Context) bool {
	ask, ok := x.preExecute(ctx)
	if !ok {
		return false
	}
	if len(ask) > 0 && !x.approve(ctx, strings.Join(ask, "; ")) {
		return false
	}
	return x.guard(ctx)
}

// preExecute is phase 4. It returns the reasons listeners gave for asking.
func (x *execution) preExecute(ctx context.Context) (ask []string, ok bool) {
	for i, l := range x.e.cfg.pre {
		var d Decision
		err := safely(func() (err error) { d, err = l(ctx, x.req); return err })
		if err != nil {
			x.fail(internal(fmt.Sprintf("pre-execute listener %d failed", i+1), err))
			return nil, false
		}
		switch d.Verdict {
		case Allow:
		case Deny:
			x.fail(denied("denied by a pre-execute listener", d.Reason))
			return nil, false
		case Ask:
			ask = append(ask, orDefault(d.Reason, "approval required"))
		default:
			x.fail(internal(fmt.Sprintf("pre-execute listener %d returned an unknown verdict %d", i+1, d.Verdict), nil))
			return nil, false
		}
	}
	return ask, true
}

// approve is phase 5: a call a listener asked about continues only when the
// approver allows it once.
func (x *execution) approve(ctx context.Context, question string) bool {
	a := x.e.cfg.approver
	if a == nil {
		x.fail(denied("approval required but no approver is configured", question))
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

// guard is phase 6: the deployment's guards first, then the scope chain's
// from farthest to nearest; the first reason denies.
func (x *execution) guard(ctx context.Context) bool {
	if len(x.e.cfg.guards) == 0 {
		return true
	}
	chain, err := x.e.reg.Chain(x.req.Scope)
	if err != nil {
		x.fail(internal("guards", err))
		return false
	}
	for _, scope := range chain {
		for i, g := range x.e.cfg.guards[scope] {
			var reason string
			err := safely(func() (err error) { reason, err = g(ctx, x.req); return err })
			if err != nil {
				x.fail(internal(fmt.Sprintf("guard %d of scope %q failed", i+1, scope), err))
				return false
			}
			if reason != "" {
				x.fail(denied(fmt.Sprintf("denied by a guard of scope %q", scope), reason))
				return false
			}
		}
	}
	return true
}

func denied(what, reason string) *registry.Error {
	msg := what
	if reason != "" {
		msg += ": " + reason
	}
	return &registry.Error{Code: registry.CodeDenied, Message: msg}
}

func internal(what string, err error) *registry.Error {
	if err == nil {
		return &registry.Error{Code: registry.CodeInternal, Message: what}
	}
	return &registry.Error{Code: registry.CodeInternal, Message: what + ": " + err.Error(), Cause: err}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
