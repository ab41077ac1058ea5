//go:build linux

package hostile_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/guest/python"
	"github.com/ptcx/ptcx/internal/testkit"
)

// The hostile corpus in Python (issue 38): what a Python program can try
// that a TypeScript one cannot (C loops the interpreter's own ticks do not
// see, CPython's allocator, its os and socket modules), each contained with
// the right kind, and a normal Python program working after it in the same
// process. Every case runs only where the build embeds the Python guest:
// in CI (make test builds it) a missing guest fails the environment's set-up
// (env_test.go enables Python there).

// normalPython is the Python run that must work after every Python case.
const normalPython = "r = await tools.glob(pattern='*.none')\n{'matches': len(r['matches']), 'sum': 1 + 1}"

// pyprog is a case that runs Python code with the caller limits given, then
// normalPython, which must give its answer.
func pyprog(code string, limits map[string]any) func(context.Context, *env) (api.Result, string) {
	return func(ctx context.Context, e *env) (api.Result, string) {
		r := e.runIn(ctx, api.LanguagePython, code, limits)
		next := e.runIn(ctx, api.LanguagePython, normalPython, nil)
		if !next.OK() || !jsonEqual(result(next), `{"matches": 0, "sum": 2}`) {
			return r, fmt.Sprintf("the normal Python program after it failed: %s", next.Text)
		}
		return r, ""
	}
}

// pythonMemoryRSSMB bounds the child's peak RSS in the Python cases that
// fill the guest's memory: its 256 MiB, the Python guest's image and pool
// beside the TypeScript guest's, and the race detector's share under -race
// (567–575 MB measured there, 295–392 MB without it; defaultMaxRSSMB is
// sized for one guest).
const pythonMemoryRSSMB = 800

var pythonCases = []hostileCase{
	{name: "python: infinite loop", family: "python", want: []string{"CODE_RUN_FAILED/timeout"},
		run: pyprog("while True:\n    pass", fast)},
	{name: "python: a loop inside C code, sum(range(10**12))", family: "python", want: []string{"CODE_RUN_FAILED/timeout"},
		run: pyprog("sum(range(10**12))", fast)},
	{name: "python: regular expression backtracking", family: "python", want: []string{"CODE_RUN_FAILED/timeout"},
		run: pyprog("import re\nre.match(r'(a+)+$', 'a' * 64 + 'b')", fast)},
	{name: "python: sorted of a huge list", family: "python", maxRSSMB: pythonMemoryRSSMB, want: []string{"CODE_RUN_FAILED/memory", "CODE_RUN_FAILED/timeout"},
		run: pyprog("sorted(range(10**9), reverse=True)", map[string]any{"timeout_ms": 2000})},
	{name: "python: memory bomb, bytes doubling", family: "python", maxRSSMB: pythonMemoryRSSMB, want: []string{"CODE_RUN_FAILED/memory"},
		run: pyprog("b = b'x'\nwhile True:\n    b += b", nil)},
	{name: "python: memory bomb, a list of MiB strings", family: "python", maxRSSMB: pythonMemoryRSSMB, want: []string{"CODE_RUN_FAILED/memory"},
		run: pyprog("held = []\nwhile True:\n    held.append(str(len(held)) * (1 << 20))", nil)},
	{name: "python: memory bomb, caught and retried", family: "python", maxRSSMB: pythonMemoryRSSMB, want: []string{"CODE_RUN_FAILED/memory", "CODE_RUN_FAILED/timeout"},
		run: pyprog("while True:\n    try:\n        held = [bytearray(1 << 20) for _ in range(10**6)]\n    except MemoryError:\n        pass", map[string]any{"timeout_ms": 2000})},
	{name: "python: deep recursion with the limit raised", family: "python", maxRSSMB: pythonMemoryRSSMB, want: []string{"CODE_RUN_FAILED/exception", "CODE_RUN_FAILED/memory"},
		run: pyprog("import sys\nsys.setrecursionlimit(10**7)\ndef f(n):\n    return f(n + 1) + 1\nf(0)", nil)},
	{name: "python: output flood", family: "python", want: []string{"CODE_RUN_FAILED/output-limit"},
		run: pyprog("while True:\n    print('x' * 1000)", nil)},
	{name: "python: os.system", family: "python", want: []string{"CODE_RUN_FAILED/exception"},
		run: pyprog("import os\nos.system('id')", nil)},
	{name: "python: subprocess", family: "python", want: []string{"CODE_RUN_FAILED/exception"},
		run: pyprog("import subprocess\nsubprocess.run(['id'])", nil)},
	{name: "python: open a file outside the stdlib zip", family: "python", want: []string{"CODE_RUN_FAILED/exception"},
		run: pyprog("open('/etc/passwd').read()", nil)},
	{name: "python: write beside the stdlib", family: "python", want: []string{"CODE_RUN_FAILED/exception"},
		run: pyprog("open('/usr/local/lib/evil.py', 'w').write('x')", nil)},
	{name: "python: ctypes", family: "python", want: []string{"CODE_RUN_FAILED/exception"},
		run: pyprog("import ctypes\nctypes.CDLL(None)", nil)},
	{name: "python: socket", family: "python", want: []string{"CODE_RUN_FAILED/exception"},
		run: pyprog("import socket\ns = socket.socket()\ns.connect(('127.0.0.1', 80))", nil)},
	{name: "python: await a future nothing resolves", family: "python", want: []string{"CODE_RUN_FAILED/exception"},
		run: func(ctx context.Context, e *env) (api.Result, string) {
			r, problem := pyprog("import asyncio\nawait asyncio.get_running_loop().create_future()", nil)(ctx, e)
			if problem == "" && !strings.Contains(r.Text, "awaiting a future that nothing can resolve") {
				problem = "the failure does not say the program awaits a future nothing can resolve: " + r.Text
			}
			return r, problem
		}},
}

// withPython says whether the environment enables Python: where the build
// embeds its guest, and in CI always (a missing guest then fails the cases
// rather than leaving them out), on either engine (PTCX_ENGINE's).
var withPython = python.Wasm() != nil || testkit.InCI()

func init() {
	if withPython {
		cases = append(cases, pythonCases...)
	}
}
