package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpserver"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
)

// A result's label is data in _meta["ptcx/labels"] (absent when it is the
// lowest), and a data-flow denial's flow in _meta["ptcx/error"].policy.
func TestServer_labelsAndPolicyInMeta(t *testing.T) {
	reg := registry.New()
	untrusted := api.Label{Integrity: api.Untrusted}
	value := func(v any) registry.Body {
		return func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput(v) }
	}
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "inbox", Body: value("mail"), Policy: policy.Declaration{Labels: &untrusted}}))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "pay", Body: value("paid"),
		Policy: policy.Declaration{Constraints: []string{"args.amount <= 10"}}}))
	e, err := executor.New(reg, executor.NewConfig())
	require.NoError(t, err)
	cs := connect(t, e, registry.Deployment, "")

	res := callTool(t, cs, "inbox", `{}`)
	require.False(t, res.IsError, text(t, res))
	raw, err := json.Marshal(res.Meta[mcpserver.MetaLabels])
	require.NoError(t, err)
	require.JSONEq(t, `{"integrity":"untrusted","confidentiality":"public"}`, string(raw))

	res = callTool(t, cs, "pay", `{"amount": 5}`)
	require.False(t, res.IsError, text(t, res))
	require.NotContains(t, res.Meta, mcpserver.MetaLabels, "the lowest label is not written")

	res = callTool(t, cs, "pay", `{"amount": 50}`)
	require.True(t, res.IsError)
	m := errorMeta(t, res)
	require.Equal(t, api.CodeDenied, m.Code)
	require.Equal(t, "constraints", m.Policy.Rule)
	require.Equal(t, "args.amount <= 10", m.Policy.Constraint)
}

// A run_code result carries its program's label in _meta["ptcx/labels"]:
// the join of the results it read (untrusted after reading the inbox),
// and a program that read nothing labelled has none.
func TestServer_runCodeLabelsInMeta(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	untrusted := api.Label{Integrity: api.Untrusted, Confidentiality: api.Private}
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "inbox",
		Body:   func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput("mail") },
		Policy: policy.Declaration{Labels: &untrusted}}))
	e, err := executor.New(reg, executor.NewConfig().WithRuntime(sharedRuntime(t)))
	require.NoError(t, err)
	cs := connect(t, e, registry.Deployment, "")

	res := callTool(t, cs, registry.RunCode, runCodeArgs(t, `return await tools.inbox({})`))
	require.False(t, res.IsError, text(t, res))
	raw, err := json.Marshal(res.Meta[mcpserver.MetaLabels])
	require.NoError(t, err)
	require.JSONEq(t, `{"integrity":"untrusted","confidentiality":"private"}`, string(raw))

	res = callTool(t, cs, registry.RunCode, runCodeArgs(t, `return 1`))
	require.False(t, res.IsError, text(t, res))
	require.NotContains(t, res.Meta, mcpserver.MetaLabels)
}
