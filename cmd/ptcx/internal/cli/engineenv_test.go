package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/wasmhost"
)

// An engine $PTCX_ENGINE names that this build cannot run is a usage error
// of every command that takes --engine, before anything starts, naming the
// variable; --engine (and serve's config) override it.
func TestEngineEnv_bad(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.ts")
	require.NoError(t, os.WriteFile(prog, []byte("return 1 + 1\n"), 0o644))
	trace := filepath.Join(dir, "t.jsonl")
	require.NoError(t, os.WriteFile(trace, nil, 0o644))
	config := filepath.Join(dir, "serve.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"listen": "127.0.0.1:0", "workspace": "`+dir+`", "tenants": [`+
		`{"name": "a", "key_sha256": "`+strings.Repeat("0", 64)+`", "mode": "ptc"}]}`), 0o644))
	t.Setenv(wasmhost.EngineEnv, "v8")
	const want = `wasmhost: the environment's PTCX_ENGINE=v8: unknown engine "v8": the engines are wazero and wasmtime`
	for _, args := range [][]string{
		{"run", prog},
		{"call", "--workspace", dir, "list", `{}`},
		{"tools", "--workspace", dir},
		{"replay", trace},
		{"serve", "--config", config},
	} {
		t.Run(args[0], func(t *testing.T) {
			out, errOut, status := ptcx(t, "", args...)
			require.Equal(t, exitUsage, status, errOut)
			require.Empty(t, out)
			lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			require.Len(t, lines, 2, errOut)
			require.Contains(t, lines[0], want)
			require.Equal(t, "see 'ptcx "+args[0]+" --help'", lines[1])
		})
	}
}

func TestEngineEnv_overridden(t *testing.T) {
	testkit.RequireGuest(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.ts")
	require.NoError(t, os.WriteFile(prog, []byte("return 1 + 1\n"), 0o644))
	t.Setenv(wasmhost.EngineEnv, "v8")
	out, errOut, status := ptcx(t, "", "run", "--engine", wasmhost.EngineWazero, prog)
	require.Equal(t, exitOK, status, errOut)
	require.Equal(t, "2\n", out)

	out, errOut, status = ptcx(t, "", "tools", "--engine", wasmhost.EngineWazero, "--workspace", dir)
	require.Equal(t, exitOK, status, errOut)
	require.Contains(t, out, "read ")
}
