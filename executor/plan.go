package executor

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/plan"
	"github.com/ptcx/ptcx/policy"
)

// PlanTool is a tool a run will add to the tools bound to its scope (such
// as ptcx serve's client tools), for Executor.Plan: its name and its
// data-flow declaration.
type PlanTool struct {
	Name   string
	Policy policy.Declaration
}

// Plan reads code, a run_code program, as scope's run_code would run it
// (the tools bound to it, and extra, the tools a run will add; the
// deployment's program size limit) and returns its plan (package plan),
// annotated with what the tools declare (plan.Annotate: each site's label
// bound and rules, the cost bound). A program that could not run is
// refused as run_code refuses it: INVALID_ARGS over a size limit,
// CODE_RUN_FAILED (syntax) when it does not parse; an unknown scope is
// UNKNOWN_TOOL.
func (e *Executor) Plan(scope, code string, extra ...PlanTool) (*plan.Plan, error) {
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
	rules := e.planRules(scope, names)
	for _, t := range extra {
		names = append(names, t.Name)
		rules[t.Name] = planRules(t.Policy)
	}
	p, err := plan.Read(code, names)
	if err != nil {
		return nil, syntaxFailure(err, code)
	}
	plan.Annotate(p, rules)
	return p, nil
}

// planRules returns the rules of the named tools of scope, for
// plan.Annotate; a tool the registry does not know is left out (unknown).
func (e *Executor) planRules(scope string, names []string) map[string]plan.Rules {
	rules := make(map[string]plan.Rules, len(names))
	for _, n := range names {
		if d, ok := e.reg.Policy(scope, n); ok {
			rules[n] = planRules(d)
		}
	}
	return rules
}

// planRules is what a plan shows of a declaration (api.PlanRules): a copy,
// so that whoever holds the plan cannot change the declaration.
func planRules(d policy.Declaration) plan.Rules {
	r := plan.Rules{Labels: clonePtr(d.Labels), NeedsApproval: d.NeedsApproval, Constraints: slices.Clone(d.Constraints),
		CallsPerRun: d.CallsPerRun, Cost: d.Cost, MaxCost: d.MaxCost}
	if a := d.Accepts; a != nil {
		r.Accepts, r.AcceptsArgs, r.OnViolation = clonePtr(a.Call), maps.Clone(a.Args), string(a.OnViolation)
		if r.OnViolation == "" {
			r.OnViolation = string(policy.Deny)
		}
	}
	return r
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
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
	plan.Annotate(read, x.e.planRules(x.req.Scope, names))
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
// or body. A call it covers needs no approval (policy.go), unless it
// carries more than the plan showed (plan.Bound.Carries): a body raised a
// result's label past its tool's declaration, and the approver saw less.
func (x *execution) withinPlan() bool {
	if !x.req.Nested || x.parent.plan == nil {
		return true
	}
	if err := x.parent.plan.Admit(x.req.Tool, x.req.Args); err != nil {
		d := denied(x.req.Tool+" is outside the approved plan "+shortHash(x.parent.plan.Hash()), err.Error())
		d.Policy = &api.PolicyViolation{Rule: "plan", Tool: x.req.Tool} // a trace's replay compares it (trace/flow.go)
		x.fail(d)
		return false
	}
	x.planned = x.parent.plan.Carries(x.req.Tool, x.ctxLabel)
	return true
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
