//go:build wasmtime

package wasmhost_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// TestEngines_samePythonOutcomes runs the same Python programs on both
// engines, in one process, and requires the same outcome of each: what
// the standard library's file system gives (a module the image does not
// hold, a listing, a read of the zip, a refused write), the deterministic
// world, calls, the WASI calls wazero refuses (time.sleep's absolute
// clock, sockets), the guest's exit (proc_exit) and its failures.
func TestEngines_samePythonOutcomes(t *testing.T) {
	requirePython(t)
	engines := map[string]*wasmhost.Runtime{}
	for _, e := range wasmhost.Engines() {
		engines[e] = newRuntime(t, testConfig().WithEngine(e).WithDeterministic(7))
	}
	require.Len(t, engines, 2)
	tests := []struct {
		name string
		code string
		kind api.Kind // "" for success
	}{
		{"a result and logs", "print('hi')\n{'a': [1, 2, 'x']}", ""},
		{"calls", "import asyncio\na, b = await asyncio.gather(tools.echo(i=1), tools.echo(i=2))\n[a, b]", ""},
		{"the deterministic world", "import random, time\n[random.random(), time.time(), time.monotonic() >= 0]", ""},
		{"a module from the zip", "import email.utils, tomllib\n[email.utils.quote('a\"b'), tomllib.loads('x = 1')]", ""},
		{"the file system", "import os\nf = open('/usr/local/lib/python313.zip', 'rb')\nhead = f.read(2)\nf.seek(-22, 2)\n" +
			"[os.listdir('/usr/local/lib'), head.decode(), f.read(4).hex(), os.stat('/usr/local/lib').st_mode >> 12]", ""},
		{"a write is refused", "open('/usr/local/lib/x', 'w')", api.KindException},
		{"no environment", "import os\ndict(os.environ)", ""},
		{"time.sleep is not supported", "import time\ntime.sleep(0)", api.KindException}, // an absolute clock in poll_oneoff: ENOTSUP
		{"a socket is refused", "import socket\nsocket.socket()", api.KindException},
		{"a raised exception", "raise ValueError('bad')", api.KindException},
		{"the guest exits", "import os\nos._exit(3)", api.KindTrap},
		{"memory past its limit", "x = []\nwhile True:\n    x.append(bytearray(1 << 20))", api.KindMemory},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type outcome struct {
				result, message string
				logs            []string
				calls           int
				kind            api.Kind
			}
			got := map[string]outcome{}
			for name, rt := range engines {
				d := &tools{}
				p := pyProgram(tt.code)
				p.Limits.MemoryBytes = 64 << 20
				out, err := rt.Run(context.Background(), p, d)
				d.wg.Wait()
				o := outcome{result: string(out.Result), logs: out.Logs, calls: out.Stats.Calls}
				if err != nil {
					var re *wasmhost.RunError
					require.True(t, errors.As(err, &re), "%s: %v", name, err)
					o.kind, o.message = re.Kind, re.Message
				}
				require.Equal(t, tt.kind, o.kind, "%s: %s", name, o.message)
				got[name] = o
			}
			require.Equal(t, got[wasmhost.EngineWazero], got[wasmhost.EngineWasmtime])
			t.Logf("%+v", got[wasmhost.EngineWasmtime])
		})
	}
}

// BenchmarkEngines_onePlusOne runs `1 + 1` end to end (admission, an
// instance from the pool, the run) in each language on each engine, in
// one process: Python on wasmtime beside Python on wazero, TypeScript's
// the baseline of each. cpu-ns/op is the process's CPU time (every
// thread's: the engine's, the pool's filler, the collector) per run,
// which a loaded machine inflates less than the time.
func BenchmarkEngines_onePlusOne(b *testing.B) {
	requirePython(b)
	ctx := context.Background()
	for _, e := range wasmhost.Engines() {
		rt := newRuntime(b, testConfig().WithEngine(e))
		require.NoError(b, rt.Prepare(ctx, api.LanguagePython))
		for _, tc := range []struct {
			name string
			p    wasmhost.Program
		}{
			{"typescript", wasmhost.Program{JS: "return 1 + 1"}},
			{"python", wasmhost.Program{JS: "1 + 1", Language: api.LanguagePython}},
		} {
			b.Run(e+"/"+tc.name, func(b *testing.B) {
				cpu := processCPU(b)
				for b.Loop() {
					if _, err := rt.Run(ctx, tc.p, &tools{}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// processCPU is the CPU time the process has used, in ns.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
