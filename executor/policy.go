package executor

import (
	"context"
	"strings"

	"github.com/ptcx/ptcx/api"
)

// policy runs phases 4 to 6: pre-execute listeners (preexecute.go),
// approval (approval.go), guards (guards.go). The first denial stops the call
// with DENIED and its reason.
func (x *execution) policy(ctx context.Context) bool {
	ask, ok := x.preExecute(ctx)
	if !ok {
		return false
	}
	if len(ask) > 0 && !x.planned && !x.approve(ctx, strings.Join(ask, "; ")) { // the approved plan covers the call (plan.go)
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
