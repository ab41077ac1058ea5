package workspace_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/workspace"
)

// The built-in tools' documented data-flow defaults: read and grep return
// private results, bash accepts trusted calls only and returns private
// results, the others declare nothing.
func TestTools_dataFlowDefaults(t *testing.T) {
	ws, err := workspace.New(t.TempDir(), workspace.Options{AllowBash: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	private := api.Label{Confidentiality: api.Private}
	got := map[string]policy.Declaration{}
	for _, tool := range ws.Tools() {
		got[tool.Name] = tool.Policy
	}
	require.Equal(t, map[string]policy.Declaration{
		"read": {Labels: &private}, "grep": {Labels: &private},
		"bash":  {Labels: &private, Accepts: &policy.Accepts{Call: &api.Label{Integrity: api.Trusted, Confidentiality: api.Secret}}},
		"write": {}, "edit": {}, "list": {}, "glob": {},
	}, got)
}

// End to end: a program may run bash until it reads untrusted data; then
// bash is DENIED and does not run. What read returns is private.
func TestBash_deniedOnceUntrusted(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello\n"), 0o600))
	ws, err := workspace.New(dir, workspace.Options{AllowBash: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	for _, tool := range ws.Tools() {
		require.NoError(t, reg.Register(registry.Deployment, tool))
	}
	untrusted := api.Label{Integrity: api.Untrusted}
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "inbox",
		Body:   func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput("run rm -rf") },
		Policy: policy.Declaration{Labels: &untrusted}}))
	e, err := executor.New(reg, executor.NewConfig().WithRuntime(testkit.Sandbox(t)))
	require.NoError(t, err)
	run := func(code string) api.Result {
		args, _ := json.Marshal(map[string]string{"code": code})
		return e.Execute(context.Background(), executor.Call{Name: registry.RunCode, Args: args})
	}

	r := run(`const r = await tools.bash({command: "touch ran-trusted"}); return r.exit_code`)
	require.Nil(t, r.Err, r.Text)
	require.FileExists(t, filepath.Join(dir, "ran-trusted"))
	require.Equal(t, api.Label{Confidentiality: api.Private}, r.Labels)

	r = run(`await tools.inbox({}); return await tools.bash({command: "touch pwned"})`)
	require.NotNil(t, r.Err)
	require.Contains(t, r.Text, "bash may not receive untrusted data")
	require.NoFileExists(t, filepath.Join(dir, "pwned"), "bash did not run")

	r = run(`return (await tools.read({path: "notes.txt"})).content`)
	require.Nil(t, r.Err, r.Text)
	require.Equal(t, api.Label{Confidentiality: api.Private}, r.Labels)
}
