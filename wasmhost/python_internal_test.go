package wasmhost

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// Python runs on wazero only: a Runtime on wasmtime refuses it, saying so.
func TestPython_wasmtimeRefused(t *testing.T) {
	rt := &Runtime{cfg: NewConfig().WithEngine(EngineWasmtime)}
	_, err := rt.newPython(context.Background())
	require.ErrorIs(t, err, ErrPythonEngine)
	require.ErrorContains(t, err, "Python programs run on the wazero engine only, for now")
	if CheckEngine(EngineWasmtime) == nil {
		require.ErrorIs(t, CheckPython(EngineWasmtime), ErrPythonEngine)
	} else {
		require.ErrorIs(t, CheckPython(EngineWasmtime), ErrNoWasmtime)
	}
}
