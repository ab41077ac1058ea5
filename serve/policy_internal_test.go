package serve

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/policy"
)

// An overlay only tightens: every member of tighten(base, over) is at
// least as strict as base's and as over's.
func TestTighten_onlyTightens(t *testing.T) {
	lbl := func(i api.Integrity, c api.Confidentiality) *api.Label {
		return &api.Label{Integrity: i, Confidentiality: c}
	}
	tests := []struct {
		name       string
		base, over policy.Declaration
		want       policy.Declaration
	}{
		{"nothing over nothing", policy.Declaration{}, policy.Declaration{}, policy.Declaration{}},
		{"labels join", policy.Declaration{Labels: lbl(api.Untrusted, api.Public)}, policy.Declaration{Labels: lbl(api.Trusted, api.Private)},
			policy.Declaration{Labels: lbl(api.Untrusted, api.Private)}},
		{"labels cannot lower", policy.Declaration{Labels: lbl(api.Untrusted, api.Secret)}, policy.Declaration{Labels: lbl(api.Trusted, api.Public)},
			policy.Declaration{Labels: lbl(api.Untrusted, api.Secret)}},
		{"accepts over none", policy.Declaration{}, policy.Declaration{Accepts: &policy.Accepts{Call: lbl(api.Trusted, api.Secret), OnViolation: policy.Ask}},
			policy.Declaration{Accepts: &policy.Accepts{Call: lbl(api.Trusted, api.Secret), OnViolation: policy.Ask}}},
		{"accepts meet, deny wins", policy.Declaration{Accepts: &policy.Accepts{Call: lbl(api.Untrusted, api.Private), OnViolation: policy.Ask,
			Args: map[string]api.Label{"to": *lbl(api.Trusted, api.Secret)}}},
			policy.Declaration{Accepts: &policy.Accepts{Call: lbl(api.Trusted, api.Secret), Args: map[string]api.Label{"to": *lbl(api.Untrusted, api.Public), "cc": *lbl(api.Trusted, api.Public)}}},
			policy.Declaration{Accepts: &policy.Accepts{Call: lbl(api.Trusted, api.Private), OnViolation: policy.Deny,
				Args: map[string]api.Label{"to": *lbl(api.Trusted, api.Public), "cc": *lbl(api.Trusted, api.Public)}}}},
		{"ask only when both ask", policy.Declaration{Accepts: &policy.Accepts{OnViolation: policy.Ask}}, policy.Declaration{Accepts: &policy.Accepts{OnViolation: policy.Ask}},
			policy.Declaration{Accepts: &policy.Accepts{OnViolation: policy.Ask}}},
		{"constraints add up", policy.Declaration{Constraints: []string{"a"}}, policy.Declaration{Constraints: []string{"b"}},
			policy.Declaration{Constraints: []string{"a", "b"}}},
		{"counts: the lower bound", policy.Declaration{CallsPerRun: 3, MaxCost: 0, Cost: 2}, policy.Declaration{CallsPerRun: 5, MaxCost: 10, Cost: 1},
			policy.Declaration{CallsPerRun: 3, MaxCost: 10, Cost: 2}},
		{"counts: a bound over none", policy.Declaration{}, policy.Declaration{CallsPerRun: 1},
			policy.Declaration{CallsPerRun: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := tt.base
			require.Equal(t, tt.want, tighten(tt.base, tt.over))
			require.Equal(t, base, tt.base, "base is not changed")
		})
	}
}
