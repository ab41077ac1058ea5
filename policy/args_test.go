package policy_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/policy"
)

// countingArgs are args read by name from m, counting what decodes all.
type countingArgs struct {
	m    map[string]any
	maps int
}

func (a *countingArgs) Lookup(name string) (any, bool) { v, ok := a.m[name]; return v, ok }
func (a *countingArgs) Map() map[string]any            { a.maps++; return a.m }

// CheckArgs answers as CheckConstraints does, for every way a constraint
// reads its arguments, and reads them all only when it must.
func TestCompiled_CheckArgs_asCheckConstraints(t *testing.T) {
	num := func(s string) json.Number { return json.Number(s) }
	argSets := []map[string]any{
		{},
		{"amount": num("999"), "to": "a@corp.test"},
		{"amount": num("1001.5"), "to": "a@evil.test", "cc": nil},
		{"amount": "5", "to": true},
		{"a": num("1")},
		{"items": []any{num("1"), num("2")}, "order": map[string]any{"total": num("3")}},
		{"amount": num("-1e400")},
	}
	for _, tc := range []struct {
		src     string
		needMap bool // the expression reads args whole
	}{
		{"args.amount <= 1000", false},
		{`args.to.endsWith("@corp.test")`, false},
		{`has(args.cc) || !has(args.to)`, false},
		{`"to" in args`, false},
		{`args["amount"] > 5`, false},
		{"args.items[1] == 2 && args.order.total < 4", false},
		{"size(args) <= 2", true},
		{`args.all(k, k != "cc")`, true},
		{`args == {"a": 1}`, true},
		{`args != {}`, true},
		{"dyn(args)[1] == 2", true},
		{"1 in dyn(args)", true},
		{`args.exists(k, args[k] == 1)`, true},
	} {
		c, err := policy.Compile(policy.Declaration{Constraints: []string{tc.src}})
		require.NoError(t, err, tc.src)
		for _, m := range argSets {
			wantFailed, wantWhy := c.CheckConstraints(m)
			a := &countingArgs{m: m}
			failed, why := c.CheckArgs(a)
			require.Equal(t, wantFailed, failed, "%s over %v", tc.src, m)
			require.Equal(t, wantWhy, why, "%s over %v", tc.src, m)
			if !tc.needMap {
				require.Zero(t, a.maps, "%s over %v reads arguments by name only", tc.src, m)
			}
		}
	}
}

// The cost limit holds through CheckArgs too.
func TestCompiled_CheckArgs_stopsAnExpensiveExpression(t *testing.T) {
	c, err := policy.Compile(policy.Declaration{Constraints: []string{
		`args.items.all(a, args.items.all(b, args.items.all(c, a + b + c >= 0)))`,
	}})
	require.NoError(t, err)
	items := make([]any, 200)
	for i := range items {
		items[i] = json.Number("1")
	}
	failed, why := c.CheckArgs(&countingArgs{m: map[string]any{"items": items}})
	require.NotEmpty(t, failed)
	require.Contains(t, why, "cost limit")
}
