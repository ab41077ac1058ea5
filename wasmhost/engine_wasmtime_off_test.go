//go:build !wasmtime

package wasmhost_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost"
)

func TestNew_wasmtimeNotBuilt(t *testing.T) {
	require.ErrorIs(t, wasmhost.CheckEngine(wasmhost.EngineWasmtime), wasmhost.ErrNoWasmtime)
	_, err := wasmhost.New(context.Background(), testConfig().WithEngine(wasmhost.EngineWasmtime))
	require.ErrorIs(t, err, wasmhost.ErrNoWasmtime)
	require.ErrorContains(t, err, "this ptcx was built without the wasmtime engine: build with `scripts/wasmtime.sh build` in the ptcx checkout")
	require.Equal(t, []string{wasmhost.EngineWazero}, wasmhost.Engines())
}

// wasmtime named by PTCX_ENGINE in a build without it: the error is still
// ErrNoWasmtime, and names the variable.
func TestNew_wasmtimeNotBuiltFromEnv(t *testing.T) {
	t.Setenv(wasmhost.EngineEnv, wasmhost.EngineWasmtime)
	_, err := wasmhost.New(context.Background(), wasmhost.NewConfig().WithCompilationCacheDir(cacheDir))
	require.ErrorIs(t, err, wasmhost.ErrNoWasmtime)
	require.EqualError(t, err, "wasmhost: the environment's PTCX_ENGINE=wasmtime: this ptcx was built without the wasmtime engine: "+
		"build with `scripts/wasmtime.sh build` in the ptcx checkout (cgo and a C compiler are needed)")
}
