package serve_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/guest/python"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/serve"
)

// A tenant runs the languages it enables: a Python program for one that
// enables only TypeScript (the default) fails with INVALID_ARGS naming it.
func TestServe_languageNotEnabled(t *testing.T) {
	ts := newServer(t, nil)
	st, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: "1 + 1", Language: api.LanguagePython})
	require.NoError(t, err)
	require.Equal(t, serve.StatusFailed, st.Status)
	require.NotNil(t, st.Error)
	require.Equal(t, string(api.CodeInvalidArgs), st.Error.Code)
	require.Contains(t, st.Error.Message, `language "python" is not one this deployment runs: it runs typescript`)
}

// A tenant that enables Python on a server whose build has no Python guest
// stops the server from starting, saying how to build it.
func TestServe_pythonNotBuilt(t *testing.T) {
	if python.Wasm() != nil {
		t.Skip("this build has the Python guest")
	}
	cfg := &serve.Config{Listen: "127.0.0.1:0", Tenants: []serve.TenantConfig{
		{Name: "a", KeySHA256: sum(keyA), Languages: []api.Language{api.LanguageTypeScript, api.LanguagePython}}}}
	withTestStore(t, cfg)
	_, err := serve.New(context.Background(), cfg, serve.Options{Runtime: testkit.Sandbox(t)})
	require.ErrorContains(t, err, "serve: tenant a: languages: wasmhost: this build of ptcx has no Python guest: build it with `make guest-python`")
}

// A tenant that enables Python runs a Python execution.
func TestServe_python(t *testing.T) {
	testkit.RequirePython(t)
	ts := newServer(t, func(c *serve.Config) {
		c.Tenants[0].Languages = []api.Language{api.LanguageTypeScript, api.LanguagePython}
	})
	st, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: "print('hi')\n20 + 22", Language: api.LanguagePython})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status, "%+v", st.Error)
	require.JSONEq(t, "42", string(st.Value))
	require.Equal(t, []string{"hi"}, st.Logs)
}
