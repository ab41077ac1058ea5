package wasmhost_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost"
)

func TestCheckEngine(t *testing.T) {
	tests := []struct {
		name    string
		engine  string
		wantErr string // "" for none
	}{
		{"wazero is in every build", wasmhost.EngineWazero, ""},
		{"an unknown engine names the known ones", "v8", `unknown engine "v8": the engines are wazero and wasmtime`},
		{"the empty name is unknown", "", `unknown engine ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := wasmhost.CheckEngine(tt.engine)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestEngines_defaultFirst(t *testing.T) {
	engines := wasmhost.Engines()
	require.Equal(t, wasmhost.EngineWazero, engines[0])
	for _, e := range engines {
		require.NoError(t, wasmhost.CheckEngine(e), e)
	}
	require.Equal(t, wasmhost.CheckEngine(wasmhost.EngineWasmtime) == nil, slices.Contains(engines, wasmhost.EngineWasmtime))
}

func TestNew_unknownEngine(t *testing.T) {
	_, err := wasmhost.New(context.Background(), testConfig().WithEngine("v8"))
	require.EqualError(t, err, `wasmhost: unknown engine "v8": the engines are wazero and wasmtime (this build has `+
		strings.Join(wasmhost.Engines(), " and ")+`)`, "a name given in code is not blamed on the environment")
}

func TestNewConfig_engineFromEnv(t *testing.T) {
	t.Setenv(wasmhost.EngineEnv, "")
	require.NoError(t, wasmhost.CheckEngineEnv(), "not set")
	t.Setenv(wasmhost.EngineEnv, wasmhost.EngineWazero)
	require.NoError(t, wasmhost.CheckEngineEnv())
	t.Setenv(wasmhost.EngineEnv, "v8")
	const want = `wasmhost: the environment's PTCX_ENGINE=v8: unknown engine "v8": the engines are wazero and wasmtime (this build has `
	require.EqualError(t, wasmhost.CheckEngineEnv(), want+strings.Join(wasmhost.Engines(), " and ")+`)`)
	_, err := wasmhost.New(context.Background(), wasmhost.NewConfig().WithCompilationCacheDir(cacheDir))
	require.EqualError(t, err, want+strings.Join(wasmhost.Engines(), " and ")+`)`,
		"NewConfig takes its engine from PTCX_ENGINE, and New's error says so")
	// WithEngine overrides it, and a bad name given in code is its own.
	_, err = wasmhost.New(context.Background(), wasmhost.NewConfig().WithCompilationCacheDir(cacheDir).WithEngine("v9"))
	require.ErrorContains(t, err, `wasmhost: unknown engine "v9"`)
	require.NotContains(t, err.Error(), wasmhost.EngineEnv)
	requireHealthy(t, newRuntime(t, wasmhost.NewConfig().WithCompilationCacheDir(cacheDir).WithEngine(wasmhost.EngineWazero)))
}
