package wasmhost

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

// Python runs on wazero only: a Runtime on wasmtime refuses it, saying so.
func TestPython_wasmtimeRefused(t *testing.T) {
	// Without the guest built, that comes first: there is nothing to run.
	want := ErrPythonEngine
	if embeddedPythonWasm() == nil || embeddedPythonLib() == nil {
		want = ErrNoPython
	}
	rt := &Runtime{cfg: NewConfig().WithEngine(EngineWasmtime)}
	_, err := rt.newPython(context.Background())
	require.ErrorIs(t, err, want)
	if want == ErrPythonEngine {
		require.ErrorContains(t, err, "Python programs run on the wazero engine only, for now")
	}
	if CheckEngine(EngineWasmtime) == nil {
		require.ErrorIs(t, CheckPython(EngineWasmtime), want)
	} else {
		require.ErrorIs(t, CheckPython(EngineWasmtime), ErrNoWasmtime)
	}
}

// The Python memory floor (api.PythonMinMemoryBytes) is above the Python
// guest's initialised image with room to run a program.
func TestPython_floorAboveImage(t *testing.T) {
	if embeddedPythonWasm() == nil {
		t.Skipf("skipped: %v", ErrNoPython)
	}
	if err := CheckPython(os.Getenv(EngineEnv)); errors.Is(err, ErrPythonEngine) {
		t.Skipf("skipped: %v (TestPython_wasmtimeRefused checks the refusal)", err)
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
