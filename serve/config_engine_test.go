package serve_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/wasmhost"
)

func TestParseConfig_engine(t *testing.T) {
	config := func(engine string) string {
		return `{"listen":"127.0.0.1:1","engine":"` + engine + `","tenants":[{"name":"a","key_sha256":"` + sum("k") + `"}]}`
	}
	c, err := serve.ParseConfig([]byte(config(wasmhost.EngineWazero)))
	require.NoError(t, err)
	require.Equal(t, wasmhost.EngineWazero, c.Engine)

	_, err = serve.ParseConfig([]byte(config("v8")))
	require.ErrorContains(t, err, `field engine: wasmhost: unknown engine "v8": the engines are wazero and wasmtime`)

	_, err = serve.ParseConfig([]byte(config(wasmhost.EngineWasmtime)))
	if wasmhost.CheckEngine(wasmhost.EngineWasmtime) == nil {
		require.NoError(t, err)
	} else {
		require.ErrorIs(t, err, wasmhost.ErrNoWasmtime)
		require.ErrorContains(t, err, "field engine: ")
	}
}
