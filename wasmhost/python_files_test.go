package wasmhost_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// A suspended Python run's open files are carried in its snapshot: the
// resumed run reads on from where it was, on the same descriptor. (On the
// Python Runtime directly: Runtime.Run refuses to suspend a Python run
// yet, python.go's pythonFor.)
func TestPython_suspendCarriesFiles(t *testing.T) {
	requirePython(t)
	rt := newRuntime(t, testConfig())
	ctx := context.Background()
	require.NoError(t, rt.Prepare(ctx, api.LanguagePython))
	py := wasmhost.PythonRuntime(rt)
	always := func(wasmhost.Quiescence) bool { return true }
	p := pyProgram("f = open('/usr/local/lib/python313.zip', 'rb')\nhead = f.read(2)\n" +
		"await tools.echo(x=1)\n[head.hex(), f.read(2).hex(), f.tell(), f.fileno()]")
	p.Suspend = always
	out, err := py.Run(ctx, p, &recordingTools{})
	require.NoError(t, err)
	require.NotNil(t, out.Suspended, "suspended at the call")
	snap := out.Suspended.Snapshot
	out, err = py.Resume(ctx, snap, &recordingTools{}, wasmhost.Resumption{})
	require.NoError(t, err)
	require.JSONEq(t, `["504b", "0304", 4, 4]`, string(out.Result), "read on from offset 2 of fd 4")
	out, err = py.Resume(ctx, snap, &recordingTools{}, wasmhost.Resumption{})
	require.NoError(t, err, "a snapshot resumes more than once")
	require.JSONEq(t, `["504b", "0304", 4, 4]`, string(out.Result))
}
