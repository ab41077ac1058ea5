package serve

import (
	"context"
	"time"

	"github.com/ptcx/ptcx/api"
)

// Pending executions. An execution that may wait on its client (it
// declared client tools, or its program may ask for an approval:
// approval.go) is counted against its tenant's max_pending,
// parked (park.go) or live (quota.Quota counts it: admission.go), until it
// settles. A live one's client tool body that was dispatched (beside an
// in-flight server-side call, where parking cannot be used) waits here,
// its guest instance blocked in it, until answered or expired.

// await blocks until pc is answered, expires or ctx ends.
func (pc *pendingCall) await(ctx context.Context) (ToolResult, error) {
	timer := time.NewTimer(time.Until(pc.expires))
	defer timer.Stop()
	select {
	case r := <-pc.answer:
		return r, nil
	case <-timer.C:
		return ToolResult{}, api.Errorf(api.CodeToolTimeout,
			"the client did not answer %s (call %s) before it expired at %s", pc.call.Name, pc.call.ID, pc.expires.UTC().Format(time.RFC3339))
	case <-ctx.Done():
		return ToolResult{}, ctx.Err()
	}
}

// pendingHeld is how many executions that may wait on their client the
// tenants hold now (ptcx_pending_executions_held).
func (s *Server) pendingHeld() int {
	n := 0
	for _, t := range s.tenants {
		n += t.quota.Pending()
	}
	return n
}
