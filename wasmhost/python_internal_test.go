package wasmhost

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
)

// Python runs on every engine that can give its guest a file system
// (engine.LookupFS): wazero, and wasmtime where the build links it; a
// Runtime on an engine without one refuses it, saying so.
func TestPython_engines(t *testing.T) {
	// Without the guest built, that comes first: there is nothing to run.
	noPython := embeddedPythonWasm() == nil || embeddedPythonLib() == nil
	_, wazeroFS := engine.LookupFS(EngineWazero)
	require.True(t, wazeroFS, "wazero gives the Python guest its file system")
	if CheckEngine(EngineWasmtime) == nil {
		_, ok := engine.LookupFS(EngineWasmtime)
		require.True(t, ok, "wasmtime gives the Python guest its file system")
		if noPython {
			require.ErrorIs(t, CheckPython(EngineWasmtime), ErrNoPython)
		} else {
			require.NoError(t, CheckPython(EngineWasmtime))
		}
		return
	}
	require.ErrorIs(t, CheckPython(EngineWasmtime), ErrNoWasmtime)
	want := ErrPythonEngine
	if noPython {
		want = ErrNoPython
	}
	rt := &Runtime{cfg: NewConfig().WithEngine(EngineWasmtime)}
	_, err := rt.newPython(context.Background())
	require.ErrorIs(t, err, want)
	if want == ErrPythonEngine {
		require.ErrorContains(t, err, "this engine cannot run Python programs")
	}
}

// The Python memory floor (api.PythonMinMemoryBytes) is above the Python
// guest's initialised image with room to run a program.
func TestPython_floorAboveImage(t *testing.T) {
	if embeddedPythonWasm() == nil {
		t.Skipf("skipped: %v", ErrNoPython)
	}
	if err := CheckPython(os.Getenv(EngineEnv)); errors.Is(err, ErrPythonEngine) {
		t.Skipf("skipped: %v (TestPython_engines checks the refusal)", err)
	}
	ctx := context.Background()
	rt, err := New(ctx, NewConfig().WithCompilationCacheDir(filepath.Join(os.TempDir(), "ptcx-wasmhost-python-test")).WithPool(0))
	require.NoError(t, err)
	defer rt.Close(ctx)
	py, err := rt.forLanguage(ctx, api.LanguagePython)
	require.NoError(t, err)
	require.NotNil(t, py.image, "the Python guest restores from its image")
	t.Logf("the Python image: %d bytes (%.1f MiB); the floor %d MiB", len(py.image.memory), float64(len(py.image.memory))/(1<<20), api.PythonMinMemoryBytes>>20)
	require.LessOrEqual(t, int64(len(py.image.memory))+4<<20, int64(api.PythonMinMemoryBytes))
}
