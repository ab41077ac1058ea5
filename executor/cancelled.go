package executor

import (
	"context"

	"github.com/ptcx/ptcx/api"
)

// checkCancelled is phase 2: a call whose caller has already given up runs no
// policy at all.
func (x *execution) checkCancelled(ctx context.Context) bool {
	if ctx.Err() != nil {
		x.fail(aborted(ctx, api.CodeAbortedBeforeDispatch, "the call was cancelled before it was dispatched"))
		return false
	}
	return true
}
