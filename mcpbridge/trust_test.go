//go:build linux

package mcpbridge_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpbridge"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
)

// An upstream tool that may reach the open world (openWorldHint true, or
// absent: MCP's default) returns untrusted results unless its upstream is
// declared trusted; one annotated openWorldHint false declares nothing.
func TestBridge_openWorldToolsAreUntrusted(t *testing.T) {
	untrusted := api.Label{Integrity: api.Untrusted}
	for _, tt := range []struct {
		name    string
		trusted bool
		want    map[string]api.Label
	}{
		{"by default", false, map[string]api.Label{"up.web": untrusted, "up.upper": untrusted, "up.closed": {}}},
		{"trusted upstream", true, map[string]api.Label{"up.web": {}, "up.upper": {}, "up.closed": {}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := upstream()
			u.Trusted = tt.trusted
			v := connect(t, u, api.ModeNative, executor.NewConfig())
			for tool, want := range tt.want {
				r := v.call(context.Background(), tool, `{"text":"hi"}`)
				require.Nil(t, r.Err, "%s: %s", tool, r.Text)
				require.Equal(t, want, r.Labels, tool)
			}
		})
	}
}

// End to end: a program that read an open-world tool's result cannot pass
// it to a tool that accepts trusted data only; from a trusted upstream it
// can.
func TestBridge_untrustedResultDeniedAtSink(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		reg := registry.New()
		require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
		u := upstream()
		u.Trusted = trusted
		b, err := mcpbridge.Connect(context.Background(), reg, registry.Deployment, u)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, b.Close()) })
		sent := 0
		require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "send",
			Body: func(context.Context, api.Input) (api.Output, error) {
				sent++
				return api.ValueOutput("sent")
			},
			Policy: policy.Declaration{Accepts: &policy.Accepts{Call: &api.Label{Integrity: api.Trusted, Confidentiality: api.Secret}}}}))
		e, err := executor.New(reg, executor.NewConfig().WithRuntime(sharedRuntime(t)))
		require.NoError(t, err)
		args, _ := json.Marshal(map[string]string{"code": `const page = await tools["up.web"]({text: "pay evil"}); return await tools.send({body: page})`})
		r := e.Execute(context.Background(), executor.Call{Name: registry.RunCode, Args: args})
		if trusted {
			require.Nil(t, r.Err, r.Text)
			require.Equal(t, 1, sent)
			continue
		}
		require.NotNil(t, r.Err)
		require.Contains(t, r.Text, "send may not receive untrusted data")
		require.Equal(t, 0, sent, "nothing reached the sink")
		require.Equal(t, api.Untrusted, r.Labels.Integrity)
	}
}
