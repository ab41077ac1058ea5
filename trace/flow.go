package trace

import (
	"encoding/json"

	"github.com/ptcx/ptcx/api"
)

// Labels and denials in a replay: the executor recomputes them from the
// declarations the stand-in tools carry (the record's Policies, or
// ReplayConfig.Policies), and the first call whose label or data-flow
// denial differs from the record's is a divergence ("labels", "policy").
// A version 1 record has neither, and is not compared.

// withFlow copies each call's label, denial and handles, as the replay's recorder
// saw them (from the executor), into the calls the dispatcher saw.
func withFlow(calls, recorded []Call) {
	byIndex := make(map[int]Call, len(recorded))
	for _, c := range recorded {
		byIndex[c.Index] = c
	}
	for i := range calls {
		r, ok := byIndex[calls[i].Index]
		if !ok {
			continue
		}
		calls[i].Labels, calls[i].Raised = r.Labels, r.Raised
		calls[i].Handle, calls[i].Handles = r.Handle, r.Handles
		if r.Error != nil && r.Error.Policy != nil {
			if calls[i].Error == nil {
				e := *r.Error
				calls[i].Error = &e
			} else {
				calls[i].Error.Policy = r.Error.Policy
			}
		}
	}
}

// flowDivergence is the first call whose label or denial differs between
// want (the record) and got (the replay), or nil.
func flowDivergence(want, got []Call) *Divergence {
	for i := 0; i < len(want) && i < len(got); i++ {
		w, g := want[i], got[i]
		if !sameLabel(w.Labels, g.Labels) {
			return &Divergence{Index: w.Index, Reason: "labels", ExpectedTool: w.Tool, ExpectedArgs: w.Args, GotTool: g.Tool, GotArgs: g.Args,
				ExpectedLabels: orLowest(w.Labels), GotLabels: orLowest(g.Labels)}
		}
		if wp, gp := policyOf(w.Error), policyOf(g.Error); !samePolicy(wp, gp) {
			return &Divergence{Index: w.Index, Reason: "policy", ExpectedTool: w.Tool, ExpectedArgs: w.Args, GotTool: g.Tool, GotArgs: g.Args,
				ExpectedPolicy: wp, GotPolicy: gp}
		}
	}
	return nil
}

func policyOf(e *Error) *api.PolicyViolation {
	if e == nil {
		return nil
	}
	return e.Policy
}

func samePolicy(a, b *api.PolicyViolation) bool {
	if a == nil || b == nil {
		return a == b
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func sameLabel(a, b *api.Label) bool { return *orLowest(a) == *orLowest(b) }

func orLowest(l *api.Label) *api.Label {
	if l == nil {
		return &api.Label{}
	}
	return l
}

func labelText(l *api.Label) string { return orLowest(l).String() }
