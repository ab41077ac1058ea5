package executor

import (
	"bytes"
	"encoding/json"

	"github.com/ptcx/ptcx/internal/resolve"
	"github.com/ptcx/ptcx/plan"
)

// A program parked for its caller (ExecuteParkable: serve's client tools)
// waits on held calls, which its caller is then asked to answer: the
// caller runs the tool before the call's plan and policy phases do, on
// resume. So a held call that the run's approved plan does not cover, or
// that its tool's data-flow rules would refuse or put to the approver, is
// not parked for: the run goes on, the call is dispatched, and the plan or
// the policy phase refuses it (or asks) before any body runs, nothing
// having reached the caller. This check is a lower bound of those phases'
// (the context label only rises before resume), which run in full on
// resume for the calls that do park. The plan comes first, as it does in
// the pipeline (plan.go): a call it covers skips needs_approval and
// on_violation: ask, so it parks for its caller like any other.
//
// A held call's arguments hold the program's handles as markers: the
// check reads them as its dispatch will (handles.go: the values in place
// of the markers, each handle's label on its argument), and the caller is
// asked with the values (callerArgs), as the tool's body would get them.

// parkCheck is what the check carries from one held call to the next of
// the same quiescence: the calls of each tool held before (charged first
// on resume: calls_per_run, max_cost), and a copy of the run's bound plan
// with them admitted (nothing is admitted for real here).
type parkCheck struct {
	held map[string]int
	plan *plan.Bound
}

// refusedBeforeParking reports whether a held call of tool name with args
// would not pass the run's plan and its tool's rules if it were
// dispatched now, after the calls chk has seen.
func (c *codeRun) refusedBeforeParking(name string, args json.RawMessage, chk *parkCheck) bool {
	res := c.x.e.resolve(c.tok.scope, name, true)
	def := res.Definition
	if def == nil {
		return false // the pipeline refuses it as it would any call: nothing to park for
	}
	var hin *handleArgs
	if t := c.tok.handles.Load(); t != nil && bytes.Contains(args, handleMarkBytes) {
		real, in, bad := t.substitute(args)
		if bad != "" {
			return true // Dispatch refuses it: not a handle this run holds
		}
		args, hin = real, in
	}
	f := &c.tok.flow
	ctx := f.context()
	planned := false
	if b := c.tok.plan; b != nil {
		if chk.plan == nil {
			chk.plan = b.Clone()
		}
		if chk.plan.Admit(name, args) != nil {
			return true // DENIED by the plan phase (plan.go)
		}
		planned = b.Carries(name, ctx) // then no approval is asked (policy.go)
	}
	p := def.Policy()
	if p == nil {
		return false
	}
	if p.NeedsApproval() && !planned {
		return true // a person first (ParkApprovals holds it for them), the caller after
	}
	if chk.held == nil {
		chk.held = map[string]int{}
	}
	before := chk.held[name]
	chk.held[name]++
	var in resolve.Args
	if resolve.ReadArgs(args, &in) != nil {
		return true
	}
	if p.HasConstraints() {
		if failed, _ := p.CheckConstraints(in.Map()); failed != "" {
			return true
		}
	}
	asked := planned && p.Ask() // a violation the tool would ask about, and the plan answers
	call := ctx
	if hin != nil {
		call = call.Join(hin.label)
	}
	if !call.Within(p.AcceptsCall()) && !asked {
		return true
	}
	if lim := p.AcceptsArgs(); len(lim) > 0 {
		m := in.Map()
		for arg, l := range lim {
			if _, present := m[arg]; present && !ctx.Join(hin.argLabel(arg)).Within(l) && !asked {
				return true
			}
		}
	}
	f.mu.Lock()
	n, cost := f.counts[name], f.cost
	f.mu.Unlock()
	if max := p.CallsPerRun(); max > 0 && n+before >= max {
		return true
	}
	if max := p.MaxCost(); max > 0 && cost+int64(before+1)*p.Cost() > max {
		return true
	}
	return false
}

// callerArgs returns the arguments a held call's caller is asked to answer
// (Parked.Calls, a live wait): args with each handle's marker replaced by
// the handle's value, as the tool's body gets them when the call is
// dispatched. A run that holds no handle, or args without a marker, are
// returned as they are; so are args the check above refused to park for
// (markers of no handle the run holds), which never reach a caller.
func (t *token) callerArgs(args json.RawMessage) json.RawMessage {
	h := t.handles.Load()
	if h == nil || !bytes.Contains(args, handleMarkBytes) {
		return args
	}
	real, _, bad := h.substitute(args)
	if bad != "" {
		return args
	}
	return real
}
