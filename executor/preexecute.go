package executor

import (
	"context"
	"fmt"
)

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
