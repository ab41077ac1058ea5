package wasmhost

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

// Python runs on every engine there is: CheckPython says so for each this
// build has, ErrNoWasmtime for wasmtime in a build without it (and
// ErrNoPython, first, in a build without the guest).
func TestCheckPython_engines(t *testing.T) {
	for _, name := range []string{EngineWazero, EngineWasmtime} {
		var want error
		switch {
		case CheckEngine(name) != nil:
			want = ErrNoWasmtime
		case embeddedPythonWasm() == nil || embeddedPythonLib() == nil:
			want = ErrNoPython
		}
		if want == nil {
			require.NoError(t, CheckPython(name), name)
		} else {
			require.ErrorIs(t, CheckPython(name), want, name)
		}
	}
	require.ErrorContains(t, CheckPython("v8"), `unknown engine "v8"`)
}

// The Python Runtime runs on its parent's engine (PTCX_ENGINE's here),
// with the standard library mounted.
func TestPython_theParentsEngine(t *testing.T) {
	if embeddedPythonWasm() == nil {
		t.Skipf("skipped: %v", ErrNoPython)
	}
	ctx := context.Background()
	rt, err := New(ctx, NewConfig().WithPool(0))
	require.NoError(t, err)
	defer rt.Close(ctx)
	py, err := rt.forLanguage(ctx, api.LanguagePython)
	require.NoError(t, err)
	require.Equal(t, rt.eng.Name(), py.eng.Name())
}

// The Python memory floor (api.PythonMinMemoryBytes) is above the Python
// guest's initialised image with room to run a program.
func TestPython_floorAboveImage(t *testing.T) {
	if embeddedPythonWasm() == nil {
		t.Skipf("skipped: %v", ErrNoPython)
	}
	ctx := context.Background()
	rt, err := New(ctx, NewConfig().WithPool(0))
	require.NoError(t, err)
	defer rt.Close(ctx)
	py, err := rt.forLanguage(ctx, api.LanguagePython)
	require.NoError(t, err)
	require.NotNil(t, py.image, "the Python guest restores from its image")
	t.Logf("the Python image: %d bytes (%.1f MiB); the floor %d MiB", len(py.image.memory), float64(len(py.image.memory))/(1<<20), api.PythonMinMemoryBytes>>20)
	require.LessOrEqual(t, int64(len(py.image.memory))+4<<20, int64(api.PythonMinMemoryBytes))
}
