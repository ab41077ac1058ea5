package wasmhost_test

import (
	"context"
	"fmt"
	"sync"
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

// A Python program sees the standard library's directory read-only: it
// lists and stats it, and every way to write, escape or close the
// preopen fails with its errno (docs/abi.md, "Python guest").
func TestPython_fileSystem(t *testing.T) {
	requirePython(t)
	rt := newRuntime(t, testConfig())
	ctx := context.Background()
	out, err := rt.Run(ctx, pyProgram(`import os, errno
def err(f):
    try:
        f()
        return 'ok'
    except OSError as e:
        return errno.errorcode.get(e.errno, e.errno)
lib = '/usr/local/lib'
r = {
    'listdir': os.listdir(lib),
    'size': os.stat(lib + '/python313.zip').st_size > 0,
    'isdir': os.path.isdir(lib),
    'write': err(lambda: open(lib + '/evil.py', 'w')),
    'update': err(lambda: open(lib + '/python313.zip', 'r+b')),
    'append': err(lambda: open(lib + '/python313.zip', 'ab')),
    'escape': err(lambda: open(lib + '/../lib/../../../etc/passwd')),
    'inside': err(lambda: open(lib + '/./python313.zip').close()),
    'above': err(lambda: open(lib + '/../lib/python313.zip')),
    'mkdir': err(lambda: os.mkdir(lib + '/d')),
    'remove': err(lambda: os.remove(lib + '/python313.zip')),
    'rename': err(lambda: os.rename(lib + '/python313.zip', lib + '/x.zip')),
    'closePreopen': err(lambda: os.close(3)),
    'seekPastEnd': err(lambda: open(lib + '/python313.zip', 'rb').seek(1 << 40)),
}
r`), &tools{})
	require.NoError(t, err)
	require.JSONEq(t, `{"listdir": ["python313.zip"], "size": true, "isdir": true, "write": "EROFS", "update": "EROFS",
		"append": "EROFS", "escape": "ENOTCAPABLE", "inside": "ok", "above": "ENOTCAPABLE", "mkdir": "EROFS", "remove": "EROFS", "rename": "EROFS",
		"closePreopen": "ENOTSUP", "seekPastEnd": "EINVAL"}`, string(out.Result))
}

// Python runs at once each have a file table of their own (the wazero
// engine finds the calling instance's): each run's first file is fd 4, and
// reads what it seeks to, however the runs interleave.
func TestPython_filesHammer(t *testing.T) {
	requirePython(t)
	rt := newRuntime(t, testConfig().WithPool(2))
	ctx := context.Background()
	require.NoError(t, rt.Prepare(ctx, api.LanguagePython))
	const workers, runs = 4, 5
	errs := make(chan error, workers*runs)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range runs {
				off := 1000*w + i
				out, err := rt.Run(ctx, pyProgram(fmt.Sprintf("import asyncio\nf = open('/usr/local/lib/python313.zip', 'rb')\n"+
					"f.seek(%d)\nawait asyncio.sleep(0.001)\n[f.fileno(), f.tell(), len(f.read(3))]", off)), &tools{})
				if err == nil && string(out.Result) != fmt.Sprintf("[4,%d,3]", off) {
					err = fmt.Errorf("run %d.%d: %s", w, i, out.Result)
				}
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
