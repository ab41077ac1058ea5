package wasmhost_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// A Python instance is recycled like a TypeScript one, its open files
// closed: a run that leaves the standard library's zip open, or opens
// files until the table is full, leaves nothing open for the tenant's next
// run, which takes the recycled instance.
func TestPython_recycledClosesFiles(t *testing.T) {
	requirePython(t)
	rt := newRuntime(t, testConfig().WithPool(1))
	ctx := context.Background()
	require.NoError(t, rt.Prepare(ctx, api.LanguagePython))
	run := func(code string) string {
		t.Helper()
		before := wasmhost.PythonPoolStats(rt).Recycled
		out, err := rt.Run(ctx, pyProgram(code), &tools{})
		require.NoError(t, err)
		require.Equal(t, before+1, wasmhost.PythonPoolStats(rt).Recycled, "the run's instance was recycled")
		return string(out.Result)
	}
	const (
		leave = "f = open('/usr/local/lib/python313.zip', 'rb')\nf.read(4)\nf.fileno()"
		probe = "import os, errno\ntry:\n    os.fstat(4)\n    os.read(4, 1)\n    r = 'open'\n" +
			"except OSError as e:\n    r = errno.errorcode[e.errno]\nr"
		exhaust = "import errno\nfs = []\ntry:\n    for _ in range(100):\n        fs.append(open('/usr/local/lib/python313.zip', 'rb'))\n" +
			"except OSError as e:\n    r = [len(fs), errno.errorcode[e.errno]]\nr"
	)
	require.Equal(t, "4", run(leave), "the first file the guest opens is fd 4")
	require.Equal(t, `"EBADF"`, run(probe), "the last run's file is not open")
	require.Equal(t, "4", run(leave))
	require.JSONEq(t, `[64, "EMFILE"]`, run(exhaust), "64 files open at most (wasifs.MaxOpen)")
	require.JSONEq(t, `[64, "EMFILE"]`, run(exhaust), "the last run's are closed")
	require.Equal(t, `"EBADF"`, run(probe))
}
