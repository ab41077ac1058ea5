package executor

import (
	"context"
	"fmt"
)

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
