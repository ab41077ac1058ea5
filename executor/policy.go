package executor

import (
	"context"
	"strings"

	"github.com/ptcx/ptcx/api"
)

// policy runs phases 4 to 6: the tool's data-flow rules (flow.go), pre-execute
// listeners (preexecute.go), approval (approval.go), guards (guards.go). The
// first denial stops the call with DENIED and its reason.
func (x *execution) policy(ctx context.Context) bool {
	flowAsk, ok := x.checkFlow()
	if !ok {
		return false
	}
	ask, ok := x.preExecute(ctx)
	if !ok {
		return false
	}
	if flowAsk != "" {
		ask = append([]string{flowAsk}, ask...)
	}
	if len(ask) > 0 && !x.planned && !x.approve(ctx, strings.Join(ask, "; ")) { // the approved plan covers the call (plan.go)
		// A call held for an approval (park_approval.go) has no error:
		// it is neither denied nor dispatched.
		if x.err != nil && x.flowAsk != nil {
			x.err.Policy = x.flowAsk
		}
		return false
	}
	return x.guard(ctx)
}

func denied(what, reason string) *api.Error {
	msg := what
	if reason != "" {
		msg += ": " + reason
	}
	return &api.Error{Code: api.CodeDenied, Message: msg}
}

func internal(what string, err error) *api.Error {
	if err == nil {
		return &api.Error{Code: api.CodeInternal, Message: what}
	}
	return &api.Error{Code: api.CodeInternal, Message: what + ": " + err.Error(), Cause: err}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
