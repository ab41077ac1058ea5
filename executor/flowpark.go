package executor

import (
	"encoding/json"

	"github.com/ptcx/ptcx/internal/resolve"
)

// A program parked for its caller (ExecuteParkable: serve's client tools)
// waits on held calls, which its caller is then asked to answer: the
// caller runs the tool before the call's policy phase does, on resume. So
// a held call that its tool's data-flow rules would refuse, or put to the
// approver, is not parked for: the run goes on, the call is dispatched,
// and the policy phase refuses it (or asks) before any body runs, nothing
// having reached the caller. This check is a lower bound of the policy
// phase's (the context label only rises before resume), which runs in
// full on resume for the calls that do park.

// refusedBeforeParking reports whether a held call of tool name with args
// would not pass its tool's rules if it were dispatched now. held counts
// the calls of each tool held before it in the same quiescence (they
// would be charged first: calls_per_run, max_cost).
func (c *codeRun) refusedBeforeParking(name string, args json.RawMessage, held map[string]int) bool {
	res := c.x.e.resolve(c.tok.scope, name, true)
	def := res.Definition
	if def == nil {
		return false // the pipeline refuses it as it would any call: nothing to park for
	}
	p := def.Policy()
	if p == nil {
		return false
	}
	if p.NeedsApproval() {
		return true // a person first (ParkApprovals holds it for them), the caller after
	}
	before := held[name]
	held[name]++
	var in resolve.Args
	if resolve.ReadArgs(args, &in) != nil {
		return true
	}
	if p.HasConstraints() {
		if failed, _ := p.CheckConstraints(in.Map()); failed != "" {
			return true
		}
	}
	f := &c.tok.flow
	ctx := f.context()
	if !ctx.Within(p.AcceptsCall()) {
		return true
	}
	if lim := p.AcceptsArgs(); len(lim) > 0 {
		m := in.Map()
		for arg, l := range lim {
			if _, present := m[arg]; present && !ctx.Within(l) {
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
