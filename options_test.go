package ptcx_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx"
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// runCodeDescription is run_code's description on reg's deployment.
func runCodeDescription(t *testing.T, reg *registry.Registry) string {
	t.Helper()
	s, ok := reg.Get(registry.Deployment, registry.RunCode)
	require.True(t, ok, "run_code is visible")
	return s.Description
}

// A host built on a registry its caller prepared changes that registry as
// it would its own: the mode, the tools, run_code's describer, and the
// tools Register adds later.
func TestNew_withRegistry(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.NewScope("agent", registry.Deployment))
	sub := ptcx.Func("sub", "Subtract b from a.", func(_ context.Context, in addArgs) (float64, error) { return in.A - in.B, nil })
	require.NoError(t, reg.Register("agent", sub))

	h := newHost(t, ptcx.WithRegistry(reg), ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(addTool))
	require.Same(t, reg, h.Registry())
	mode, err := reg.Mode("agent")
	require.NoError(t, err)
	require.Equal(t, ptcx.ModePTC, mode, "WithMode declared on the given registry")
	_, ok := reg.Get(registry.Deployment, "add")
	require.True(t, ok, "WithTools registered on it")
	require.Contains(t, runCodeDescription(t, reg), "add(args: AddArgs): Promise<AddOutput>;", "its describer is the SDK's")

	mul := ptcx.Func("mul", "Multiply.", func(_ context.Context, in addArgs) (float64, error) { return in.A * in.B, nil })
	require.NoError(t, h.Register(mul))
	_, ok = reg.Get("agent", "mul")
	require.True(t, ok, "Register adds to it")
}

func TestNew_withRegistry_invalid(t *testing.T) {
	declared := registry.New()
	require.NoError(t, declared.DeclareMode(registry.Deployment, api.ModeBoth))
	for _, tc := range []struct {
		name string
		opts []ptcx.Option
		want string
	}{
		{"nil", []ptcx.Option{ptcx.WithRegistry(nil)}, "ptcx: WithRegistry got a nil registry"},
		{"nil after a good one", []ptcx.Option{ptcx.WithRegistry(registry.New()), ptcx.WithRegistry(nil)}, "ptcx: WithRegistry got a nil registry"},
		{"a mode declared twice", []ptcx.Option{ptcx.WithRegistry(declared), ptcx.WithMode(ptcx.ModePTC)}, "ptcx: WithMode: INVALID_DEFINITION"},
		{"a tool registered twice", []ptcx.Option{ptcx.WithRegistry(withAdd(t)), ptcx.WithTools(addTool)}, `ptcx: WithTools: INVALID_DEFINITION: tool "add" is already registered on scope "deployment"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := ptcx.New(context.Background(), append([]ptcx.Option{ptcx.WithCodeRuntime(noSandbox{})}, tc.opts...)...)
			require.Nil(t, h)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func withAdd(t *testing.T) *registry.Registry {
	t.Helper()
	reg := registry.New()
	require.NoError(t, reg.Register(registry.Deployment, addTool))
	return reg
}

// run_code's description: the SDK's by default, another describer's, the
// short default, or, on a given registry with WithPlainRunCodeDescription,
// whatever the registry had; the last of WithRunCodeDescriber and
// WithPlainRunCodeDescription wins, and with sessions the session rule
// ends it.
func TestNew_runCodeDescriber(t *testing.T) {
	mine := func(scope, base string, bindable []api.Schema) string { return "mine: " + base }
	theirs := func(string, string, []api.Schema) string { return "the registry's own" }
	for _, tc := range []struct {
		name   string
		reg    registry.Describer // the describer the given registry has; nil: New makes the registry
		opts   []ptcx.Option
		want   string // the description, or its start with a trailing "…"
		typed  bool   // it has the tools' declarations (the SDK's)
		prompt bool   // it ends with executor.SessionPrompt
	}{
		{"the SDK's by default", nil, nil, "Run a TypeScript program…", true, false},
		{"another describer", nil, []ptcx.Option{ptcx.WithRunCodeDescriber(mine)}, "mine: " + registry.DefaultRunCodeDescription, false, false},
		{"a nil describer: the short default", nil, []ptcx.Option{ptcx.WithRunCodeDescriber(nil)}, registry.DefaultRunCodeDescription, false, false},
		{"plain after a describer", nil, []ptcx.Option{ptcx.WithRunCodeDescriber(mine), ptcx.WithPlainRunCodeDescription()}, registry.DefaultRunCodeDescription, false, false},
		{"a describer after plain", nil, []ptcx.Option{ptcx.WithPlainRunCodeDescription(), ptcx.WithRunCodeDescriber(mine)}, "mine: " + registry.DefaultRunCodeDescription, false, false},
		{"plain keeps a given registry's", theirs, []ptcx.Option{ptcx.WithPlainRunCodeDescription()}, "the registry's own", false, false},
		{"a given registry gets the SDK's", theirs, nil, "Run a TypeScript program…", true, false},
		{"another describer, with sessions", nil, []ptcx.Option{ptcx.WithRunCodeDescriber(mine), ptcx.WithSessions(ptcx.SessionLimits{})}, "mine: …", false, true},
		{"plain, with sessions", nil, []ptcx.Option{ptcx.WithPlainRunCodeDescription(), ptcx.WithSessions(ptcx.SessionLimits{})}, registry.DefaultRunCodeDescription + "…", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := append([]ptcx.Option{ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(addTool)}, tc.opts...)
			if tc.reg != nil {
				reg := registry.New()
				reg.SetRunCodeDescriber(tc.reg)
				opts = append(opts, ptcx.WithRegistry(reg))
			}
			got := runCodeDescription(t, newHost(t, opts...).Registry())
			if prefix, ok := strings.CutSuffix(tc.want, "…"); ok {
				require.True(t, strings.HasPrefix(got, prefix), "%q does not start with %q", got, prefix)
			} else {
				require.Equal(t, tc.want, got)
			}
			require.Equal(t, tc.prompt, strings.HasSuffix(got, executor.SessionPrompt), got)
			require.Equal(t, tc.typed, strings.Contains(got, "add(args: AddArgs): Promise<AddOutput>;"), got)
		})
	}
}
