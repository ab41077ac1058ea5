package executor

import "context"

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
