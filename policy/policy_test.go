package policy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/policy"
)

func decode(t *testing.T, s string) (policy.Declaration, error) {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(s), &m))
	return policy.DecodeMembers(m)
}

func TestDecodeMembers_theIssuesExample(t *testing.T) {
	d, err := decode(t, `{"name": "send_email",
	 "labels": {"integrity": "trusted", "confidentiality": "private"},
	 "accepts": {"confidentiality": "private", "args": {"to": {"integrity": "trusted"}}, "on_violation": "deny"},
	 "handle": true,
	 "constraints": ["args.amount <= 1000"],
	 "calls_per_run": 1, "cost": 3, "max_cost": 9}`)
	require.NoError(t, err)
	require.Equal(t, api.Label{Confidentiality: api.Private}, *d.Labels)
	require.Equal(t, api.Label{Integrity: api.Untrusted, Confidentiality: api.Private}, *d.Accepts.Call, "integrity left out: any")
	require.Equal(t, api.Label{Integrity: api.Trusted, Confidentiality: api.Secret}, d.Accepts.Args["to"], "confidentiality left out: any")
	require.Equal(t, policy.Deny, d.Accepts.OnViolation)
	require.True(t, d.Handle)
	require.Equal(t, []string{"args.amount <= 1000"}, d.Constraints)
	require.Equal(t, 1, d.CallsPerRun)
	require.EqualValues(t, 3, d.Cost)
	require.EqualValues(t, 9, d.MaxCost)

	c, err := policy.Compile(d)
	require.NoError(t, err)
	require.Equal(t, api.Label{Confidentiality: api.Private}, c.Labels())
	require.False(t, c.Ask())
	require.True(t, c.Handle())
}

func TestCompiled_Handle(t *testing.T) {
	var none *policy.Compiled
	require.False(t, none.Handle(), "a tool that declares nothing gives values")
	c, err := policy.Compile(policy.Declaration{Handle: true})
	require.NoError(t, err)
	require.NotNil(t, c, "handle alone is a declaration")
	require.True(t, c.Handle())
	c, err = policy.Compile(policy.Declaration{CallsPerRun: 1})
	require.NoError(t, err)
	require.False(t, c.Handle())
}

func TestDecodeMembers_refusesBadMembers(t *testing.T) {
	for in, want := range map[string]string{
		`{"labels": {"integrity": "shady"}}`:                      `labels: integrity "shady" is not one of trusted, untrusted`,
		`{"labels": {"integrity": "trusted", "owner": "x"}}`:      `labels: a label has only the members integrity and confidentiality, not "owner"`,
		`{"labels": null}`:                                        "labels: a label is an object",
		`{"accepts": {"confidentiality": "top"}}`:                 `accepts: confidentiality "top" is not one of`,
		`{"accepts": {"args": {"to": {"integrity": "maybe"}}}}`:   `accepts.args.to: integrity "maybe"`,
		`{"accepts": {"args": ["to"]}}`:                           "accepts.args is an object",
		`{"accepts": {"on_violation": "warn"}}`:                   `accepts.on_violation "warn" is not "deny" or "ask"`,
		`{"accepts": {"on_violation": 1}}`:                        `accepts.on_violation is "deny" or "ask"`,
		`{"accepts": {"integrity": "trusted", "when": "always"}}`: `accepts has no member "when"`,
		`{"accepts": "trusted"}`:                                  "accepts is an object",
		`{"handle": "yes"}`:                                       "handle:",
		`{"calls_per_run": 1.5}`:                                  "calls_per_run:",
		`{"constraints": "args.a > 1"}`:                           "constraints:",
		`{"cost": null}`:                                          "cost: null is not a value here",
		`{"needs_approval": "yes"}`:                               "needs_approval:",
		`{"needs_approval": 1}`:                                   "needs_approval:",
		`{"needs_approval": null}`:                                "needs_approval: null is not a value here",
	} {
		_, err := decode(t, in)
		require.ErrorContains(t, err, want, in)
	}
}

func TestCompile_refusesWhatCannotBeEnforced(t *testing.T) {
	bad := api.Label{Integrity: 5}
	for name, tc := range map[string]struct {
		d    policy.Declaration
		want string
	}{
		"a bad label":               {policy.Declaration{Labels: &bad}, "labels:"},
		"a bad accepts":             {policy.Declaration{Accepts: &policy.Accepts{Call: &bad}}, "accepts:"},
		"a bad argument label":      {policy.Declaration{Accepts: &policy.Accepts{Args: map[string]api.Label{"to": bad}}}, "accepts.args.to:"},
		"an empty argument name":    {policy.Declaration{Accepts: &policy.Accepts{Args: map[string]api.Label{"": {}}}}, "argument name is empty"},
		"a bad on_violation":        {policy.Declaration{Accepts: &policy.Accepts{OnViolation: "maybe"}}, "on_violation"},
		"negative calls":            {policy.Declaration{CallsPerRun: -1}, "calls_per_run: -1 is negative"},
		"negative cost":             {policy.Declaration{Cost: -1}, "cost: -1 is negative"},
		"negative max cost":         {policy.Declaration{MaxCost: -1}, "max_cost: -1 is negative"},
		"CEL that does not compile": {policy.Declaration{Constraints: []string{"args.amount <="}}, `constraints[0] "args.amount <=": does not compile`},
		"an unknown variable":       {policy.Declaration{Constraints: []string{"true", "amount < 3"}}, `constraints[1] "amount < 3": does not compile`},
		"not a condition":           {policy.Declaration{Constraints: []string{"size(args)"}}, "is of type int, not bool"},
		"an empty constraint":       {policy.Declaration{Constraints: []string{" "}}, "constraints[0] \" \": empty"},
		"a long constraint":         {policy.Declaration{Constraints: []string{"true || " + strings.Repeat("true || ", 300) + "true"}}, "over the 2048 a constraint may have"},
		"too many constraints":      {policy.Declaration{Constraints: make([]string, policy.MaxConstraints+1)}, "33 of them, over the 32"},
	} {
		_, err := policy.Compile(tc.d)
		require.ErrorContains(t, err, tc.want, name)
	}
	c, err := policy.Compile(policy.Declaration{})
	require.NoError(t, err)
	require.Nil(t, c, "nothing declared: no policy to consult")
	c, err = policy.Compile(policy.Declaration{Constraints: make([]string, policy.MaxConstraints)[:0]})
	require.NoError(t, err)
	require.Nil(t, c)
}

func TestCompiled_CheckConstraints_atBelowAndPast(t *testing.T) {
	c, err := policy.Compile(policy.Declaration{Constraints: []string{
		"args.amount <= 1000",
		`args.to.endsWith("@corp.test")`,
	}})
	require.NoError(t, err)
	num := func(s string) json.Number { return json.Number(s) }
	for _, tc := range []struct {
		args       map[string]any
		failed, in string
	}{
		{map[string]any{"amount": num("999"), "to": "a@corp.test"}, "", ""},
		{map[string]any{"amount": num("1000"), "to": "a@corp.test"}, "", ""},
		{map[string]any{"amount": num("999.5"), "to": "a@corp.test"}, "", ""},
		{map[string]any{"amount": num("1000.5"), "to": "a@corp.test"}, "args.amount <= 1000", "false"},
		{map[string]any{"amount": num("1001"), "to": "a@corp.test"}, "args.amount <= 1000", "false"},
		{map[string]any{"amount": num("5"), "to": "a@evil.test"}, `args.to.endsWith("@corp.test")`, "false"},
		{map[string]any{"to": "a@corp.test"}, "args.amount <= 1000", "could not be evaluated: no such key: amount"},
		{map[string]any{"amount": "5", "to": "a@corp.test"}, "args.amount <= 1000", "could not be evaluated"},
	} {
		failed, why := c.CheckConstraints(tc.args)
		require.Equal(t, tc.failed, failed, "%v", tc.args)
		require.Contains(t, why, tc.in, "%v", tc.args)
	}
}

// Numbers are json.Number at any depth: CEL reads them as ints or doubles
// inside lists and objects too, never as strings.
func TestCompiled_CheckConstraints_nestedNumbers(t *testing.T) {
	c, err := policy.Compile(policy.Declaration{Constraints: []string{
		"args.items[0] + 1 == 2",
		"args.items.all(x, x < 10)",
		"args.order.total <= 99.5 && args.order.lines[1].qty == 3",
	}})
	require.NoError(t, err)
	num := func(s string) json.Number { return json.Number(s) }
	args := func(first, qty json.Number) map[string]any {
		return map[string]any{
			"items": []any{first, num("2.5")},
			"order": map[string]any{"total": num("99.5"), "lines": []any{map[string]any{}, map[string]any{"qty": qty}}},
		}
	}
	failed, why := c.CheckConstraints(args(num("1"), num("3")))
	require.Empty(t, failed, why)
	failed, _ = c.CheckConstraints(args(num("2"), num("3")))
	require.Equal(t, "args.items[0] + 1 == 2", failed)
	failed, _ = c.CheckConstraints(args(num("1"), num("4")))
	require.Equal(t, "args.order.total <= 99.5 && args.order.lines[1].qty == 3", failed)
	failed, why = c.CheckConstraints(map[string]any{"items": []any{"1"}})
	require.Equal(t, "args.items[0] + 1 == 2", failed, "a string is not a number")
	require.Contains(t, why, "could not be evaluated")
	failed, why = c.CheckConstraints(map[string]any{"items": []any{num("1"), num("-1e400")}})
	require.Equal(t, "args.items.all(x, x < 10)", failed, "a number out of a double's range is no number CEL can compare")
	require.Contains(t, why, "could not be evaluated")
}

func TestCompiled_CheckConstraints_stopsAnExpensiveExpression(t *testing.T) {
	c, err := policy.Compile(policy.Declaration{Constraints: []string{
		`args.items.all(a, args.items.all(b, args.items.all(c, a + b + c >= 0)))`,
	}})
	require.NoError(t, err)
	items := make([]any, 200)
	for i := range items {
		items[i] = json.Number("1")
	}
	failed, why := c.CheckConstraints(map[string]any{"items": items})
	require.NotEmpty(t, failed)
	require.Contains(t, why, "cost limit")
}

func TestDeclaration_NeedsApproval(t *testing.T) {
	d, err := decode(t, `{"needs_approval": true}`)
	require.NoError(t, err)
	require.True(t, d.NeedsApproval)
	require.False(t, d.IsZero(), "it declares something: the tool has a policy to consult")
	c, err := policy.Compile(d)
	require.NoError(t, err)
	require.True(t, c.NeedsApproval())
	require.False(t, c.Ask(), "needs_approval is not on_violation")

	d, err = decode(t, `{"needs_approval": false}`)
	require.NoError(t, err)
	require.True(t, d.IsZero())
	c, err = policy.Compile(d)
	require.NoError(t, err)
	require.Nil(t, c)

	c, err = policy.Compile(policy.Declaration{CallsPerRun: 1})
	require.NoError(t, err)
	require.False(t, c.NeedsApproval())

	b, err := json.Marshal(policy.Declaration{NeedsApproval: true})
	require.NoError(t, err)
	require.JSONEq(t, `{"needs_approval": true}`, string(b))
}

func TestAccepts_JSON_roundTrips(t *testing.T) {
	in := `{"integrity":"trusted","confidentiality":"private","args":{"to":{"integrity":"trusted","confidentiality":"secret"}},"on_violation":"ask"}`
	var a policy.Accepts
	require.NoError(t, json.Unmarshal([]byte(in), &a))
	out, err := json.Marshal(a)
	require.NoError(t, err)
	require.JSONEq(t, in, string(out))
}

// FuzzDecodeMembers: a tools file's policy members, whatever their bytes,
// decode or fail without panicking, and what decodes compiles or fails
// with an error.
func FuzzDecodeMembers(f *testing.F) {
	for _, s := range []string{
		`{"labels": {"integrity": "untrusted"}}`,
		`{"accepts": {"confidentiality": "private", "args": {"to": {"integrity": "trusted"}}, "on_violation": "ask"}}`,
		`{"constraints": ["args.a < 3"], "calls_per_run": 2}`,
		`{"accepts": {"args": {"": {}}}}`,
		`{"needs_approval": true, "cost": 1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			return
		}
		d, err := policy.DecodeMembers(m)
		if err != nil {
			return
		}
		if c, err := policy.Compile(d); err == nil && c != nil {
			c.CheckConstraints(map[string]any{})
		}
	})
}
