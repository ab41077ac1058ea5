package executor

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ptcx/ptcx/api"
)

// postExecute is phase 8: every listener sees a successful value and may
// accept it (optionally replacing it) or block it.
func (x *execution) postExecute(ctx context.Context) {
	if x.err != nil || !x.ran {
		return
	}
	for i, l := range x.e.cfg.post {
		var d PostDecision
		err := safely(func() (err error) { d, err = l(ctx, x.req, x.out.Value); return err })
		switch {
		case err != nil:
			x.fail(internal(fmt.Sprintf("post-execute listener %d failed", i+1), err))
			return
		case d.Block:
			x.fail(denied("blocked after execution", d.Feedback))
			return
		case d.Replace != nil:
			if !json.Valid(d.Replace) {
				x.fail(internal(fmt.Sprintf("post-execute listener %d replaced the value with invalid JSON", i+1), nil))
				return
			}
			x.out = api.Output{Value: append(json.RawMessage(nil), d.Replace...)}
		}
	}
}
