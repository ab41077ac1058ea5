package plan_test

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/plan"
)

var (
	untrusted = api.Label{Integrity: api.Untrusted}
	private   = api.Label{Confidentiality: api.Private}
	trusted   = api.Label{Integrity: api.Trusted, Confidentiality: api.Secret}
)

// rules are the declarations the table's programs are annotated with;
// "a-b" and "then" are unknown.
var rules = map[string]plan.Rules{
	"lookup":        {Labels: &untrusted, Cost: 2},
	"fs.read_file":  {Labels: &private},
	"send_email":    {Accepts: &trusted, OnViolation: "deny", Cost: 5, CallsPerRun: 1},
	"fs.write_file": {AcceptsArgs: map[string]api.Label{"content": {}}, OnViolation: "ask"},
}

// annotated is a site as "tool labels may", may one of deny, ask, both or
// -.
func annotated(c plan.Call) string {
	may := "-"
	switch {
	case c.MayDeny && c.MayAsk:
		may = "both"
	case c.MayDeny:
		may = "deny"
	case c.MayAsk:
		may = "ask"
	}
	return fmt.Sprintf("%s %s %s", c.Tool, c.Labels, may)
}

func TestAnnotate(t *testing.T) {
	cost := func(n int64) *int64 { return &n }
	cases := []struct {
		name   string
		code   string
		sites  []string
		labels api.Label
		cost   *int64
	}{
		{name: "no calls", code: "return 1", cost: cost(0)},
		{name: "read then send", code: "const u = await tools.lookup({q: 1})\nawait tools.send_email({to: u.email})",
			sites:  []string{"lookup trusted, public -", "send_email untrusted, public deny"},
			labels: untrusted, cost: cost(7)},
		{name: "send first still counts the later read (order is not followed)", code: "await tools.send_email({to: 'a'})\nawait tools.lookup({q: 1})",
			sites:  []string{"send_email untrusted, public deny", "lookup trusted, public -"},
			labels: untrusted, cost: cost(7)},
		{name: "a site that does not repeat does not count itself", code: "await tools.lookup({q: 1})",
			sites: []string{"lookup trusted, public -"}, labels: untrusted, cost: cost(2)},
		{name: "a site that repeats counts itself, and has no cost bound", code: "for (const q of [1, 2]) await tools.lookup({q})",
			sites: []string{"lookup untrusted, public -"}, labels: untrusted},
		{name: "a repeating site without a cost keeps the bound", code: "for (const p of ['a']) await tools.fs.read_file({path: p})\nawait tools.lookup({q: 1})",
			sites:  []string{"fs.read_file untrusted, private -", "lookup trusted, private -"},
			labels: api.Label{Integrity: api.Untrusted, Confidentiality: api.Private}, cost: cost(2)},
		{name: "per-argument accepts, argument given", code: "const f = await tools.fs.read_file({path: 'a'})\nawait tools.fs.write_file({path: 'b', content: f})",
			sites: []string{"fs.read_file trusted, public -", "fs.write_file trusted, private ask"}, labels: private, cost: cost(0)},
		{name: "per-argument accepts, argument absent", code: "await tools.fs.read_file({path: 'a'})\nawait tools.fs.write_file({path: 'b'})",
			sites: []string{"fs.read_file trusted, public -", "fs.write_file trusted, private -"}, labels: private, cost: cost(0)},
		{name: "per-argument accepts, opaque arguments", code: "const a: any = {}\nawait tools.fs.read_file({path: 'a'})\nawait tools.fs.write_file(a)",
			sites: []string{"fs.read_file trusted, public -", "fs.write_file trusted, private ask"}, labels: private, cost: cost(0)},
		{name: "unknown tool: the highest label, either outcome, no cost bound", code: "await tools[\"a-b\"]({})\nawait tools.lookup({q: 1})",
			sites: []string{"a-b untrusted, public both", "lookup untrusted, secret -"}, labels: api.Top},
		{name: "dynamic: every tool counts, no cost bound", code: "const t = tools\nawait t.lookup({})\nawait tools.send_email({to: 'x'})",
			sites: []string{"send_email untrusted, secret deny"}, labels: api.Top},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := plan.Read(c.code, bound)
			require.NoError(t, err)
			plan.Annotate(p, rules)
			var got []string
			for _, s := range p.Calls {
				got = append(got, annotated(s))
			}
			require.Equal(t, c.sites, got)
			require.Equal(t, c.labels, *p.Labels)
			require.Equal(t, c.cost, p.Cost)
			for _, tool := range p.Tools {
				_, known := rules[tool]
				_, shown := p.Rules[tool]
				require.Equal(t, known, shown, "the rules of %s", tool)
			}
		})
	}
}

func TestAnnotate_costOverflowHasNoBound(t *testing.T) {
	p, err := plan.Read("await tools.lookup({})\nawait tools.send_email({})", bound)
	require.NoError(t, err)
	plan.Annotate(p, map[string]plan.Rules{"lookup": {Cost: math.MaxInt64}, "send_email": {Cost: 1}})
	require.Nil(t, p.Cost)
	plan.Annotate(p, map[string]plan.Rules{"lookup": {Cost: math.MaxInt64 - 1}, "send_email": {Cost: 1}})
	require.Equal(t, int64(math.MaxInt64), *p.Cost)
}

// TestBound_Carries: a bound run keeps each allowed tool's label bound,
// through its parked state too; state parked before bounds were kept
// has none, so every call of it is asked.
func TestBound_Carries(t *testing.T) {
	p, err := plan.Read("const u = await tools.lookup({q: 1})\nawait tools.send_email({to: u.email})", bound)
	require.NoError(t, err)
	plan.Annotate(p, rules)
	b, err := plan.Bind(p, p)
	require.NoError(t, err)
	require.True(t, b.Carries("send_email", untrusted))
	require.False(t, b.Carries("send_email", private))
	require.True(t, b.Carries("lookup", api.Label{}))
	require.False(t, b.Carries("lookup", untrusted))
	require.False(t, b.Carries("fs.read_file", api.Label{}), "a tool the plan does not allow carries nothing")

	state, err := b.MarshalJSON()
	require.NoError(t, err)
	back, err := plan.RestoreBound(state)
	require.NoError(t, err)
	require.True(t, back.Carries("send_email", untrusted))
	require.False(t, back.Carries("send_email", private))

	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(state, &m))
	require.Contains(t, m, "labels")
	delete(m, "labels")
	old, err := json.Marshal(m)
	require.NoError(t, err)
	back, err = plan.RestoreBound(old)
	require.NoError(t, err)
	require.False(t, back.Carries("send_email", api.Label{}))

	m["labels"] = json.RawMessage(`{"send_email": {"integrity": "nope"}}`)
	bad, err := json.Marshal(m)
	require.NoError(t, err)
	_, err = plan.RestoreBound(bad)
	require.Error(t, err)

	// Read without declarations (no Labels): the plan bounds nothing, as
	// before plans had labels.
	p, err = plan.Read("await tools.lookup({q: 1})", bound)
	require.NoError(t, err)
	b, err = plan.Bind(p, p)
	require.NoError(t, err)
	require.True(t, b.Carries("lookup", api.Top))
}
