package ptcx

import (
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/plan"
)

// Plan is what a run_code program can do, read without running it: its
// call sites of tools, their literal arguments, whether each can run more
// than once, and whether it reaches tools in a way no reader can follow
// (package plan). Its JSON form is the document a person approves; a
// Call with Plan set runs only that program, and only the calls the plan
// allows.
type Plan = plan.Plan

// Plan reads code, a run_code program, against the tools bound to scope's
// programs (empty: the deployment), without running it. A program that
// could not run is refused as run_code refuses it (INVALID_ARGS over the
// size limit, CODE_RUN_FAILED with kind syntax); an unknown scope is
// UNKNOWN_TOOL.
func (h *Host) Plan(scope, code string) (*Plan, error) {
	if h.closed.Load() {
		return nil, &Error{Code: api.CodeInternal, Message: ErrClosed.Error(), Cause: ErrClosed}
	}
	return h.exec.Plan(scope, code)
}
