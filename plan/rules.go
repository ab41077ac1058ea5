package plan

import (
	"math"
	"slices"

	"github.com/ptcx/ptcx/api"
)

// Rules are the rules of a tool's declaration a plan shows (api.PlanRules);
// the host converts its tools' declarations to them, so this package
// imports no policy.
type Rules = api.PlanRules

// Annotate fills in p what the tools' declarations say: the rules each of
// its tools' calls can meet (Plan.Rules), the most each call site can carry (Call.Labels),
// whether what its tool accepts may refuse it or ask (Call.MayDeny,
// Call.MayAsk), the most the program's data can carry (Plan.Labels) and
// the plan's cost bound (Plan.Cost). rules holds the
// declaration of every tool the host knows; a tool not in it is unknown:
// its results may carry anything (api.Top) and its calls may be refused
// or asked.
//
// The label bound is sound for declared labels: the context label a call
// is made with is the join of the labels of the results the program read
// before it (docs/security.md, "Data flow"), a result's label is its
// tool's declared labels joined with the context label of its call, and
// so, by induction, a call carries at most the join of the declared labels
// of the tools whose results came back before it. The reader does not
// order sites (a destructuring default runs after the right-hand side, an
// argument's call before the callee's), so it counts every other site: a
// site that does not repeat runs at most once, so its own result cannot
// reach it; one that repeats counts itself too. A dynamic plan can call
// any of its tools any number of times: every site counts every tool.
func Annotate(p *Plan, rules map[string]Rules) {
	label := func(tool string) api.Label {
		r, ok := rules[tool]
		switch {
		case !ok:
			return api.Top
		case r.Labels == nil:
			return api.Label{}
		}
		return *r.Labels
	}
	var all api.Label
	for _, t := range p.Tools {
		all = all.Join(label(t))
	}
	p.Labels = &all
	p.Rules = map[string]Rules{}
	for _, t := range p.Tools {
		if r, ok := rules[t]; ok {
			p.Rules[t] = r
		}
	}
	// The join of every other site's label is its prefix's joined with
	// its suffix's: linear in the sites, of which a program can have tens
	// of thousands.
	n := len(p.Calls)
	suffix := make([]api.Label, n+1)
	for i := n - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1].Join(label(p.Calls[i].Tool))
	}
	var prefix api.Label
	for i := range p.Calls {
		c := &p.Calls[i]
		own := label(c.Tool)
		bound := all
		if !p.Dynamic {
			bound = prefix.Join(suffix[i+1])
			if c.Repeats {
				bound = bound.Join(own)
			}
		}
		prefix = prefix.Join(own)
		c.Labels = &bound
		c.MayDeny, c.MayAsk = false, false
		r, known := rules[c.Tool]
		if !known {
			c.MayDeny, c.MayAsk = true, true
			continue
		}
		if past(c, r, bound) {
			if r.OnViolation == "ask" {
				c.MayAsk = true
			} else {
				c.MayDeny = true
			}
		}
	}
	p.Cost = costBound(p, rules)
}

// past reports whether a call at site c, carrying bound, can go past what
// its tool accepts: the whole call, or an argument the site may give
// (every argument carries the context label).
func past(c *Call, r Rules, bound api.Label) bool {
	if r.Accepts != nil && !bound.Within(*r.Accepts) {
		return true
	}
	for name, limit := range r.AcceptsArgs {
		if bound.Within(limit) {
			continue
		}
		if _, lit := c.Args[name]; lit || slices.Contains(c.Computed, name) || slices.Contains(c.Computed, Opaque) {
			return true
		}
	}
	return false
}

// costBound is the sum of the sites' costs, or nil when there is no bound:
// the plan is dynamic, a site whose tool costs something repeats, or a
// site's tool is unknown (or the sum does not fit an int64).
func costBound(p *Plan, rules map[string]Rules) *int64 {
	if p.Dynamic {
		return nil
	}
	var sum int64
	for _, c := range p.Calls {
		r, ok := rules[c.Tool]
		if !ok || (c.Repeats && r.Cost > 0) {
			return nil
		}
		if r.Cost > math.MaxInt64-sum {
			return nil
		}
		sum += r.Cost
	}
	return &sum
}
