package executor

import (
	"errors"
	"fmt"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/plan"
)

// Plan reads code, a run_code program, as scope's run_code would run it
// (the tools bound to it, and extra, the names of tools a run will add,
// such as ptcx serve's client tools; the deployment's program size limit)
// and returns its plan (package plan). A program that could not run is refused as
// run_code refuses it: INVALID_ARGS over a size limit, CODE_RUN_FAILED
// (syntax) when it does not parse; an unknown scope is UNKNOWN_TOOL.
func (e *Executor) Plan(scope, code string, extra ...string) (*plan.Plan, error) {
	if scope == "" {
		scope = deploymentScope
	}
	if limit := e.cfg.maxCodeBytes; len(code) > limit {
		return nil, &api.Error{Code: api.CodeInvalidArgs, Message: fmt.Sprintf("the program is %d bytes, over the limit of %d bytes", len(code), limit)}
	}
	names, err := e.bindableNames(scope)
	if err != nil {
		return nil, err
	}
	p, err := plan.Read(code, append(names, extra...))
	if err != nil {
		return nil, syntaxFailure(err, code)
	}
	return p, nil
}

func (e *Executor) bindableNames(scope string) ([]string, error) {
	bindable, err := e.reg.Bindable(scope)
	if err != nil {
		return nil, api.Errorf(api.CodeUnknownTool, "scope %q does not exist", scope)
	}
	names := make([]string, len(bindable))
	for i, b := range bindable {
		names[i] = b.Name
	}
	return names, nil
}

// bindPlan binds a run_code call made with Call.Plan to it: the program
// is read again here, with names, the tools bound to the run, and the
// run may make only the calls both that reading and the approved plan
// allow (plan.Bind). A run in a session is refused (its earlier programs
// may have left aliases of tools behind that no reading of this one can
// see), as is a plan made from another program. nil, nil without a plan.
func (x *execution) bindPlan(code string, names []string) (*plan.Bound, *api.Error) {
	approved := x.plan
	if approved == nil {
		return nil, nil
	}
	if x.session != "" {
		return nil, &api.Error{Code: api.CodeInvalidArgs, Message: fmt.Sprintf(
			"run_code: a program bound to a plan cannot run in a session (%q): the session's earlier programs may have left aliases of tools "+
				"that no reading of this program can see; run it without a session, or without the plan", x.session)}
	}
	read, err := plan.Read(code, names)
	if err != nil {
		return nil, syntaxFailure(err, code)
	}
	b, err := plan.Bind(read, approved)
	var mm *plan.MismatchError
	if errors.As(err, &mm) {
		return nil, &api.Error{Code: api.CodeDenied, Message: "run_code: " + mm.Error() + "; nothing ran", Cause: err}
	}
	if err != nil {
		return nil, internal("run_code: binding the plan", err)
	}
	return b, nil
}

// withinPlan is the plan's check of a nested call of a run bound to a plan
// (Call.Plan), after validation and before the policy phases: a call the
// approved plan does not cover is DENIED, and reaches no listener, approver
// or body. A call it covers needs no approval (policy.go).
func (x *execution) withinPlan() bool {
	if !x.req.Nested || x.parent.plan == nil {
		return true
	}
	if err := x.parent.plan.Admit(x.req.Tool, x.req.Args); err != nil {
		x.fail(denied(x.req.Tool+" is outside the approved plan "+shortHash(x.parent.plan.Hash()), err.Error()))
		return false
	}
	x.planned = true
	return true
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
