package python

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Tests of the Python guest speaking guest ABI 3 (docs/abi.md, "Python
// guest") to the fake host of fakehost_test.go.

// echo answers every call with its arguments and the tool's name.
func echo(c call) (int32, string) {
	return 1, fmt.Sprintf(`{"tool": %q, "args": %s}`, c.Name, c.Args)
}

func runCode(t *testing.T, code string, tools ...string) *guest {
	t.Helper()
	g := newGuest(t)
	g.drive(g.start(config{Code: code, Tools: tools}), echo)
	return g
}

func TestABI_version(t *testing.T) {
	g := newGuest(t)
	if v := g.call("ptcx_abi_version"); v != 3 {
		t.Fatalf("ptcx_abi_version = %d", v)
	}
	for _, name := range []string{"ptcx_prelude_bytecode", "ptcx_compile", "ptcx_load"} {
		if g.r.mod.ExportedFunction(name) != nil {
			t.Fatalf("python.wasm exports %s", name)
		}
	}
}

func TestABI_values(t *testing.T) {
	for _, c := range []struct{ code, want string }{
		{"1 + 1", "2"},
		{"x = 1", "<no result>"},
		{"", "<no result>"},
		{"None", "null"},
		{"'h\u00e9\\n\"' * 2", `"hé\n\"hé\n\""`},
		{"{'a': [1, 2.5, True, None], 3: (4,)}", `{"a":[1,2.5,true,null],"3":[4]}`},
		{"10**30", "1000000000000000000000000000000"},
		// Integers at and past the edges of the encoder's 64-bit path.
		{"[0, -1, 7, -10, 10**18, -2**63, 2**63 - 1, -2**63 - 1, 2**63]",
			"[0,-1,7,-10,1000000000000000000,-9223372036854775808,9223372036854775807,-9223372036854775809,9223372036854775808]"},
		{"{-5: 1, 2**63: 2}", `{"-5":1,"9223372036854775808":2}`},
		{"import asyncio\nawait asyncio.sleep(0)\n7", "7"},
		{"async def f():\n    return 5\nawait f()", "5"},
		{"import json, re\n[int(m) for m in re.findall(r'\\d+', json.dumps([1, 22]))]", "[1,22]"},
		// The final expression statement becomes an assignment to <result>
		// (compile.c): after a semicolon, a continued line, a docstring, a
		// future import; not when the last statement is a compound one.
		{"x = 3; x * 2", "6"},
		// A coding declaration is ignored: the source is text already, as
		// compile() of a str takes it.
		{"# coding: latin-1\nx = '\u00e9'\n[len(x), ord(x)]", "[1,233]"},
		{"# -*- coding: bogus -*-\n1", "1"},
		{"1 +\\\n 2", "3"},
		{"'''doc'''", `"doc"`},
		{"from __future__ import annotations\ndef f(a: int): return a\nf.__annotations__", `{"a":"int"}`},
		{"if True:\n    5", "<no result>"},
		{"def g():\n    return 8\ng()\n# a comment last\n", "8"},
	} {
		t.Run(c.code, func(t *testing.T) {
			g := runCode(t, c.code)
			if got := g.value(); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestABI_print(t *testing.T) {
	g := runCode(t, "import sys\nprint('hello', 41 + 1)\nprint('a\\nb', end='')\nprint('x', file=sys.stderr)\nprint('no newline', end='')")
	want := []string{"hello 42", "a", "[error] x", "bno newline"}
	// The last statement is an expression, print(...): its value None is
	// the result, null.
	if strings.Join(g.r.logs, "|") != strings.Join(want, "|") || g.value() != "null" {
		t.Fatalf("logs %q, result %s", g.r.logs, g.value())
	}
	if g.r.stdout.Len() != 0 || g.r.stderr.Len() != 0 {
		t.Fatalf("wrote to WASI stdout %q / stderr %q", g.r.stdout.String(), g.r.stderr.String())
	}
}

func TestABI_toolCall(t *testing.T) {
	for _, code := range []string{
		`r = await tools.read(path="a.txt", n=2)` + "\nr",
		`r = await tools.read({"path": "a.txt", "n": 2})` + "\nr",
		`await tools["read"](path="a.txt", n=2)`,
	} {
		t.Run(code, func(t *testing.T) {
			g := runCode(t, code, "read", "write")
			if len(g.r.calls) != 1 || g.r.calls[0].Name != "read" || g.r.calls[0].Args != `{"path":"a.txt","n":2}` {
				t.Fatalf("calls %+v", g.r.calls)
			}
			if got := g.value(); got != `{"tool":"read","args":{"path":"a.txt","n":2}}` {
				t.Fatalf("result %s", got)
			}
		})
	}
}

func TestABI_oddAndDottedNames(t *testing.T) {
	g := runCode(t, `[await tools["odd-name"](), await tools.fs.read_file(p=1), await tools["class"]()]`,
		"odd-name", "fs.read_file", "class")
	if got := g.value(); got != `[{"tool":"odd-name","args":{}},{"tool":"fs.read_file","args":{"p":1}},{"tool":"class","args":{}}]` {
		t.Fatalf("result %s", got)
	}
}

// gather registers every call before the guest returns pending, and the
// results arrive in any order.
func TestABI_gatherOutOfOrder(t *testing.T) {
	g := newGuest(t)
	st := g.start(config{Code: "import asyncio\nr = await asyncio.gather(tools.get(i=1), tools.get(i=2), tools.get(i=3))\nr",
		Tools: []string{"get"}})
	if st != 1 || len(g.r.calls) != 3 {
		t.Fatalf("status %d with %d calls registered, want pending with 3", st, len(g.r.calls))
	}
	for _, i := range []int{2, 0} {
		if st := g.resume(g.r.calls[i].ID, 1, fmt.Sprintf(`"r%d"`, i+1)); st != 1 {
			t.Fatalf("resume %d: status %d", i, st)
		}
	}
	if st := g.resume(g.r.calls[1].ID, 1, `"r2"`); st != 0 {
		t.Fatalf("last resume: status %d", st)
	}
	if got := g.value(); got != `["r1","r2","r3"]` {
		t.Fatalf("result %s", got)
	}
}

func TestABI_toolCallError(t *testing.T) {
	g := newGuest(t)
	st := g.start(config{Code: `
try:
    await tools.read(path="x")
except ToolCallError as e:
    r = [str(e), e.code, e.tool]
from ptcx import ToolCallError as T
r + [T is ToolCallError]`, Tools: []string{"read"}})
	g.drive(st, func(c call) (int32, string) { return 0, "no such file\x00TOOL_TIMEOUT" })
	if got := g.value(); got != `["no such file","TOOL_TIMEOUT","read",true]` {
		t.Fatalf("result %s", got)
	}
}

func TestABI_uncaughtToolCallError(t *testing.T) {
	g := newGuest(t)
	g.drive(g.start(config{Code: "x = 1\nawait tools.read()", Tools: []string{"read"}}),
		func(c call) (int32, string) { return 0, "it failed" })
	e := g.failure()
	if e.Kind != "exception" || e.Message != "ToolCallError: it failed" || !strings.Contains(e.Stack, `File "<program>", line 2`) ||
		strings.Contains(e.Stack, "<ptcx>") {
		t.Fatalf("error %+v", e)
	}
}

func TestABI_refusals(t *testing.T) {
	for _, c := range []struct {
		refuse int32
		want   string
	}{{-1, "BUSY"}, {-2, "DENIED"}} {
		g := newGuest(t)
		g.r.refuse = c.refuse
		g.drive(g.start(config{Code: "try:\n    await tools.read()\nexcept ToolCallError as e:\n    r = [e.code, str(e)]\nr",
			Tools: []string{"read"}, MaxCalls: 7, MaxPendingCalls: 3, MaxTimers: 1}), echo)
		var got []string
		if err := json.Unmarshal([]byte(g.value()), &got); err != nil || got[0] != c.want ||
			!strings.Contains(got[1], map[int32]string{-1: "(the limit is 3)", -2: "limit of 7"}[c.refuse]) {
			t.Fatalf("refusal %d: %s", c.refuse, g.value())
		}
	}
}

func TestABI_unboundTool(t *testing.T) {
	g := runCode(t, "await tools.nope(x=1)", "read", "write")
	e := g.failure()
	if e.Kind != "exception" || !strings.Contains(e.Message, "AttributeError: tools.nope is not a bound tool; the bound tools are: read, write") {
		t.Fatalf("error %+v", e)
	}
	g = runCode(t, "import _ptcx\n_ptcx.call('nope', {})", "read")
	if e := g.failure(); !strings.Contains(e.Message, "'nope' is not a bound tool") || len(g.r.failures) != 0 {
		t.Fatalf("error %+v, host failures %v", e, g.r.failures)
	}
}

func TestABI_notPlainArguments(t *testing.T) {
	g := runCode(t, "await tools.read(opts={'a': [1, {2}]})", "read")
	if e := g.failure(); e.Message != "TypeError: tools.read: the arguments are not plain JSON: args['opts']['a'][1] is a set, which is not JSON (make it a list)" {
		t.Fatalf("error %+v", e)
	}
	if len(g.r.calls) != 0 {
		t.Fatalf("calls %+v", g.r.calls)
	}
}

func TestABI_sleep(t *testing.T) {
	g := newGuest(t)
	st := g.start(config{Code: "import asyncio\nawait asyncio.sleep(0.25)\nt = asyncio.get_running_loop().call_later(5, print, 'never')\nt.cancel()\n'slept'"})
	if st != 1 || len(g.r.timers) != 1 || g.r.timers[1] != 250 {
		t.Fatalf("status %d, timers %v", st, g.r.timers)
	}
	if st := g.drive(st, echo); st != 0 || g.value() != `"slept"` || len(g.r.timers) != 0 || len(g.r.logs) != 0 {
		t.Fatalf("status %d, result %s, timers %v, logs %q", st, g.value(), g.r.timers, g.r.logs)
	}
}

func TestABI_handle(t *testing.T) {
	g := newGuest(t)
	st := g.start(config{Code: `
h = await tools.fetch(url="u")
try:
    str(h)
except TypeError as e:
    why = str(e)
t = await h.text()
await tools.send(body=h, n=[h])
[h.size, dict(h.labels), h.tool, t, why[:20], type(h).__name__, repr(h)]`, Tools: []string{"fetch", "send"}})
	env := `{"ref": "0123456789abcdef0123456789abcdef", "size": 12, "labels": {"integrity": "untrusted", "confidentiality": "private"}, "tool": "fetch"}`
	g.drive(st, func(c call) (int32, string) {
		switch c.Name {
		case "fetch":
			return 2, env
		case "$handle":
			if c.Args != `{"ref":"0123456789abcdef0123456789abcdef","as":"text"}` {
				t.Errorf("$handle args %s", c.Args)
			}
			return 1, `"hello world!"`
		}
		return 1, "null"
	})
	if got := g.value(); got != `[12,{"integrity":"untrusted","confidentiality":"private"},"fetch","hello world!","a Handle is not text",`+
		`"Handle","<Handle of 12 bytes from tool 'fetch'>"]` {
		t.Fatalf("result %s", got)
	}
	if c := g.r.calls[2]; c.Name != "send" || c.Args != `{"body":{"$ptcx.handle":"0123456789abcdef0123456789abcdef"},"n":[{"$ptcx.handle":"0123456789abcdef0123456789abcdef"}]}` {
		t.Fatalf("send %+v", c)
	}
}

func TestABI_handleRefHidden(t *testing.T) {
	g := newGuest(t)
	st := g.start(config{Code: `
import gc
h = await tools.fetch()
found = [o for o in gc.get_referents(h) if isinstance(o, str) and "0123456789abcdef" in o]
[found, [a for a in dir(h) if "ref" in a]]`, Tools: []string{"fetch"}})
	g.drive(st, func(c call) (int32, string) {
		return 2, `{"ref": "0123456789abcdef0123456789abcdef", "size": 1, "labels": {}, "tool": "fetch"}`
	})
	if got := g.value(); got != "[[],[]]" {
		t.Fatalf("result %s", got)
	}
}

func TestABI_sessionGlobals(t *testing.T) {
	g := newGuest(t)
	g.drive(g.start(config{Code: "x = 41\ndef f(y):\n    return y + 1\nimport asyncio\npending = asyncio.sleep(100)", Session: true}), echo)
	if g.value() != "<no result>" {
		t.Fatal(g.value())
	}
	if st := g.call("ptcx_next"); st != 0 {
		t.Fatalf("ptcx_next: %d", st)
	}
	g.reset()
	g.drive(g.start(config{Code: "f(x)", Session: true}), echo)
	if got := g.value(); got != "42" {
		t.Fatalf("result %s", got)
	}
	// A program left pending is forgotten by ptcx_next.
	if st := g.call("ptcx_next"); st != 0 {
		t.Fatalf("ptcx_next: %d", st)
	}
	g.reset()
	if st := g.start(config{Code: "await tools.slow()\nx = 0", Tools: []string{"slow"}, Session: true}); st != 1 {
		t.Fatalf("status %d", st)
	}
	if st := g.call("ptcx_next"); st != 0 {
		t.Fatalf("ptcx_next: %d", st)
	}
	g.reset()
	g.drive(g.start(config{Code: "x", Session: true}), echo)
	if got := g.value(); got != "41" {
		t.Fatalf("result %s", got)
	}
}

func TestABI_syntaxError(t *testing.T) {
	g := runCode(t, "x = 1\ny = (2 +\n")
	e := g.failure()
	if e.Kind != "syntax" || e.Line != 2 || e.Column != 5 || !strings.HasPrefix(e.Message, "SyntaxError: ") {
		t.Fatalf("error %+v", e)
	}
	// A symbol table's error in the final expression, now an assignment.
	g = runCode(t, "x = 1\n(yield x)")
	if e := g.failure(); e.Kind != "syntax" || e.Line != 2 || !strings.Contains(e.Message, "'yield' outside function") {
		t.Fatalf("error %+v", e)
	}
	g = runCode(t, "x = 1\x00")
	if e := g.failure(); e.Kind != "exception" || e.Message != "ValueError: source code string cannot contain null bytes" {
		t.Fatalf("error %+v", e)
	}
	g = runCode(t, "x = 1\n  y = 2")
	if e := g.failure(); e.Kind != "syntax" || e.Line != 2 || !strings.HasPrefix(e.Message, "IndentationError: ") {
		t.Fatalf("error %+v", e)
	}
}

func TestABI_exception(t *testing.T) {
	g := runCode(t, "def f():\n    raise ValueError('bad')\nf()")
	e := g.failure()
	if e.Kind != "exception" || e.Message != "ValueError: bad" || !strings.Contains(e.Stack, "line 2, in f") ||
		!strings.Contains(e.Stack, "raise ValueError('bad')") || strings.Contains(e.Stack, "<ptcx>") {
		t.Fatalf("error %+v", e)
	}
}

func TestABI_memoryError(t *testing.T) {
	g := newGuest(t)
	g.drive(g.start(config{Code: "x = []\nwhile True:\n    x.append(' ' * 100000)", MemoryLimit: 48 << 20}), echo)
	if e := g.failure(); e.Kind != "memory" {
		t.Fatalf("error %+v", e)
	}
	// Caught, MemoryError is the program's to handle.
	g = newGuest(t)
	g.drive(g.start(config{Code: "try:\n    x = ' ' * (60 << 20)\nexcept MemoryError:\n    x = 'caught'\nx", MemoryLimit: 48 << 20}), echo)
	if got := g.value(); got != `"caught"` {
		t.Fatalf("result %s", got)
	}
}

func TestABI_recursion(t *testing.T) {
	g := runCode(t, "def f(n):\n    return f(n + 1)\nf(0)")
	if e := g.failure(); e.Kind != "exception" || !strings.HasPrefix(e.Message, "RecursionError: ") || len(e.Stack) > 10000 {
		t.Fatalf("error %+v", e)
	}
}

func TestABI_invalidOutput(t *testing.T) {
	for _, c := range []struct{ code, want string }{
		{"{1, 2}", "the program's result is not JSON: result is a set, which is not JSON (make it a list)"},
		{"{'a': [float('nan')]}", "the program's result is not JSON: result['a'][0] is the float nan, which is not a JSON number"},
		{"tools.read()", "the program's result is not JSON: result is a coroutine, which is not JSON (a tool call or async function not awaited?)"},
		{"x = []\nx.append(x)\nx", "the program's result is not JSON: result[0] is a circular reference to one of its parents"},
	} {
		t.Run(c.code, func(t *testing.T) {
			g := runCode(t, c.code, "read")
			if e := g.failure(); e.Kind != "invalid-output" || e.Message != c.want {
				t.Fatalf("error %+v", e)
			}
		})
	}
}

func TestABI_randomReseeded(t *testing.T) {
	// The fake world's random source is the same bytes for every instance:
	// the seed comes from it (ptcx_start, ptcx_restored, ptcx_next).
	a := runCode(t, "import random\nrandom.random()").value()
	b := runCode(t, "import random\nrandom.random()").value()
	if a != b {
		t.Fatalf("%s != %s from the same random source", a, b)
	}
}

func TestABI_outOfOrderExports(t *testing.T) {
	g := newGuest(t)
	if st := g.resume(1, 1, "1"); st != 2 {
		t.Fatalf("ptcx_resume before start: %d", st)
	}
	g = newGuest(t)
	g.drive(g.start(config{Code: "1"}), echo)
	if st := g.resume(99, 1, "1"); st != 0 {
		t.Fatalf("ptcx_resume after done: %d", st)
	}
}

// FuzzStart feeds arbitrary bytes as a program: the outcome is a result or
// well-formed error JSON, and never a trap. A program that runs past a few
// seconds is cut and not judged. Each input gets a fresh instance.
func FuzzStart(f *testing.F) {
	for _, s := range []string{
		"1 + 1", "x = [", "\xff\xfe", "raise SystemExit", "def f(): return f()\nf()",
		"import json; json.loads('[' * 100000)", "'\\N{", "(" + strings.Repeat("(", 300) + "1" + strings.Repeat(")", 301),
		"import sys; sys.setrecursionlimit(10**6); eval('-' * 100000 + '1')", "\x00", "await tools.t(x=1)",
		// The C parts of the loop and the tools, called as a program may.
		"import _ptcx\n_ptcx.call_soon()", "import _ptcx, contextvars\n_ptcx.call_soon(1, 2, context=contextvars.copy_context())",
		"import _ptcx, collections\n_ptcx.loop_init(collections.deque(), 1, 2, {}, 3, {}, 4, 5, ValueError)\nawait tools.t()",
		"import _ptcx\n_ptcx.tools_init(int, {}, None, {})\nawait tools.t()", "c = tools.t()\nc.throw(1)",
		"c = tools.t()\nc.send(None)\nc.send(None)", "type(tools.t)('x')",
	} {
		f.Add([]byte(s))
	}
	rt, compiled := compiledGuest(f)
	f.Fuzz(func(t *testing.T, code []byte) {
		g := instantiateGuest(t, rt, compiled)
		defer g.close()
		if st := g.call("ptcx_init", 0, 0); st != 0 {
			t.Fatal("ptcx_init failed")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		g.r.ctx = ctx
		g.r.bound = map[string]bool{"t": true}
		st, err := g.tryRun(config{Code: string(code), Tools: []string{"t"}, MaxPendingCalls: 8, MaxCalls: 8, MaxTimers: 8}, 100)
		if ctx.Err() != nil {
			t.Skip("ran past the deadline")
		}
		if err != nil {
			t.Fatalf("program %q trapped: %v; host failures %v", code, err, g.r.failures)
		}
		if st == 2 && g.r.errJSON == nil || st == 0 && g.r.errJSON != nil {
			t.Fatalf("program %q: status %d, error %v", code, st, g.r.errJSON)
		}
	})
}

// Deep recursion of every kind is a RecursionError, never a trap; a result
// nested too deeply is invalid output.
func TestABI_deepRecursion(t *testing.T) {
	for _, c := range []struct{ name, code, want string }{
		{"python", "def f(n):\n    return f(n + 1)\nf(0)", "RecursionError: "},
		{"repr of a deep list", "x = []\nfor _ in range(100000):\n    x = [x]\nrepr(x)", "RecursionError: "},
		{"json.dumps of a deep list", "import json\nx = []\nfor _ in range(100000):\n    x = [x]\njson.dumps(x)", "RecursionError: "},
		{"raised limit", "import sys\nsys.setrecursionlimit(100000)\ndef g(n):\n    return g(n + 1)\ng(0)", "RecursionError: "},
		{"raised limit, repr", "import sys\nsys.setrecursionlimit(1000000)\nx = []\nfor _ in range(200000):\n    x = [x]\nrepr(x)", "RecursionError: "},
		{"deep result", "x = []\nfor _ in range(100000):\n    x = [x]\nx", "the program's result is not JSON: result[0][0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := runCode(t, c.code)
			if e := g.failure(); !strings.HasPrefix(e.Message, c.want) {
				t.Fatalf("error %+v", e)
			}
		})
	}
}

// What a program cannot do fails as an exception, never a trap.
func TestABI_contained(t *testing.T) {
	for _, c := range []struct{ code, want string }{
		{"import _ssl", "ModuleNotFoundError: "},
		{"import tkinter", "ModuleNotFoundError: "},
		{"import subprocess\nsubprocess.run(['ls'])", "OSError: "},
		{"open('/usr/local/lib/python313.zip', 'wb')", "Error: "},
		{"open('/etc/passwd').read()", "PermissionError: "},
		{"import socket\nsocket.socket()", "Error: "},
		{"import os\nos.system('ls')", "AttributeError: "},
		{"import asyncio\nasyncio.run(asyncio.sleep(0))", "RuntimeError: "},
		{"import sys\nsys.exit(3)", "SystemExit: 3"},
	} {
		t.Run(c.code, func(t *testing.T) {
			g := runCode(t, c.code)
			if e := g.failure(); e.Kind != "exception" || !strings.Contains(e.Message, c.want) {
				t.Fatalf("error %+v", e)
			}
		})
	}
}

func TestABI_catalog(t *testing.T) {
	cat := `[{"name": "fs.read_file", "summary": "Read a file.", "description": "Read a file from disk.", "declaration": "d1", "inputSchema": {"type": "object"}, "outputSchema": null},` +
		`{"name": "weather", "summary": "Get the weather.", "description": "Forecast.", "declaration": "d2", "inputSchema": null, "outputSchema": null}]`
	g := newGuest(t)
	b, _ := json.Marshal(map[string]any{"code": "[tools['$search']('read file'), tools['$describe']('weather')['declaration']]",
		"tools": []string{"fs.read_file", "weather"}, "catalog": cat, "maxPendingCalls": 1, "maxCalls": 1, "maxTimers": 1})
	g.r.bound = map[string]bool{"fs.read_file": true, "weather": true}
	g.drive(g.call("ptcx_start", g.write(b), uint64(len(b))), echo)
	if got := g.value(); got != `[[{"name":"fs.read_file","description":"Read a file."}],"d2"]` {
		t.Fatalf("result %s", got)
	}
	g = runCode(t, "tools['$search']('x')", "read")
	if e := g.failure(); !strings.Contains(e.Message, "is not available: every bound tool is declared in the prompt") {
		t.Fatalf("error %+v", e)
	}
}

// An initialised instance's memory and __stack_pointer, copied into fresh
// instances that run neither _initialize nor ptcx_init (as wasmhost's image
// restores them), run programs after ptcx_restored, random reseeded from
// each instance's own source.
func TestABI_restoredFromImage(t *testing.T) {
	rt, compiled := compiledGuest(t)
	g := newGuest(t)
	img, ok := g.r.mod.Memory().Read(0, g.r.mod.Memory().Size())
	if !ok {
		t.Fatal("read memory")
	}
	img = bytes.Clone(img)
	nonzero := 0
	for i := 0; i < len(img); i += 4096 {
		if !bytes.Equal(img[i:i+4096], make([]byte, 4096)) {
			nonzero++
		}
	}
	t.Logf("the image: %d bytes of memory, %d of its 4 KiB blocks not zero", len(img), nonzero)
	sp := g.r.mod.ExportedGlobal("__stack_pointer").Get()
	var values []string
	for _, seed := range []byte{1, 2, 1} {
		r := instantiateWith(t, rt, compiled, nil, seed)
		defer r.close()
		mem := r.r.mod.Memory()
		if _, ok := mem.Grow((uint32(len(img)) - mem.Size()) / 65536); !ok || !mem.Write(0, img) {
			t.Fatal("restore memory")
		}
		r.r.mod.ExportedGlobal("__stack_pointer").(api.MutableGlobal).Set(sp)
		if st := r.call("ptcx_restored"); st != 0 {
			t.Fatalf("ptcx_restored: %d", st)
		}
		r.drive(r.start(config{Code: "import random\nv = await tools.get(i=1)\n[v['args'], random.random()]", Tools: []string{"get"}}), echo)
		var got []any
		if err := json.Unmarshal([]byte(r.value()), &got); err != nil || fmt.Sprint(got[0]) != "map[i:1]" {
			t.Fatalf("result %s", r.value())
		}
		values = append(values, fmt.Sprint(got[1]))
	}
	if values[0] == values[1] || values[0] != values[2] {
		t.Fatalf("random values %v: want them to follow the instance's random source", values)
	}
}

// Without the stdlib zip, ptcx_init fails with one error, never a trap.
func TestABI_initWithoutZip(t *testing.T) {
	rt, compiled := compiledGuest(t)
	r := &run{timers: map[int32]int32{}, ctx: context.Background()}
	ctx := context.WithValue(context.Background(), runKey{}, r)
	mod, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName("").
		WithStartFunctions("_initialize").WithStdout(&r.stdout).WithStderr(&r.stderr))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	r.mod = mod
	res, err := mod.ExportedFunction("ptcx_init").Call(ctx, 0, 0)
	if err != nil || int32(res[0]) != 2 || r.errJSON == nil || !strings.Contains(*r.errJSON, "initialising") {
		t.Fatalf("ptcx_init: %v %v, error %v", res, err, r.errJSON)
	}
}

// TestABI_loopCallbacks: the loop's call_soon and step (runtime.py's lean
// ones) keep asyncio's behaviour: FIFO order, a cancelled handle skipped, a
// callback's exception given to the loop's exception handler (the next ones
// still run), debug mode and get_debug following set_debug.
func TestABI_loopCallbacks(t *testing.T) {
	g := runCode(t, `
import asyncio
loop = asyncio.get_running_loop()
seen, errors = [], []
loop.set_exception_handler(lambda l, c: errors.append(type(c["exception"]).__name__))
h = loop.call_soon(seen.append, "cancelled")
h.cancel()
loop.call_soon(seen.append, "a")
def boom():
    raise ValueError("x")
loop.call_soon(boom)
loop.call_soon(seen.append, "b")
f = loop.create_future()
loop.call_soon(f.set_result, 1)
await f
d0 = loop.get_debug()
loop.set_debug(True)
d1 = loop.get_debug()
loop.call_soon(seen.append, "debug")
await asyncio.sleep(0)
loop.set_debug(False)
await asyncio.gather(asyncio.sleep(0), asyncio.sleep(0))
[seen, errors, d0, d1, loop.get_debug(), h.cancelled(), isinstance(h, asyncio.Handle)]`)
	if got, want := g.value(), `[["a","b","debug"],["ValueError"],false,true,false,true,true]`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestABI_callIsACoroutine: a tool's call (glue/tool.c) is what the async
// def it replaced was to asyncio and to a program: created, it makes no
// call; asyncio.create_task, gather and wait_for take it; awaited twice it
// raises; a task waiting on one is cancelled; send and throw behave as a
// coroutine's; argument mistakes raise TypeError naming the tool, and a
// refusal raises ToolCallError when awaited.
func TestABI_callIsACoroutine(t *testing.T) {
	g := runCode(t, `
import asyncio, collections.abc
c = tools.get(i=0)
made = [type(c).__name__, asyncio.iscoroutine(c), isinstance(c, collections.abc.Coroutine)]
t = asyncio.create_task(tools.get(i=1))
r1 = await t
r2 = await asyncio.wait_for(tools.get(i=2), 5)
x = tools.get(i=3)
r3 = await x
try:
    await x
    again = "no error"
except RuntimeError as e:
    again = str(e)
try:
    tools.get(1, i=2)
except TypeError as e:
    both = str(e)
try:
    tools["odd-name"](1, 2)
except TypeError as e:
    many = str(e)
try:
    await tools.get(s={1})
except TypeError as e:
    notjson = str(e)
u = tools.get(i=4)
try:
    u.send(1)
except TypeError as e:
    sent = str(e)
v = tools.get(i=5)
try:
    v.throw(ValueError("thrown"))
except ValueError as e:
    thrown = str(e)
w = tools.get(i=6)
w.close()
s = tools.get(i=7)
fut = s.send(None)
waited = isinstance(fut, asyncio.Future)
[made, r1, r2, r3, again, both, many, notjson, sent, thrown, waited, repr(tools.get), tools.get.__name__]`, "get", "odd-name")
	want := `[["Call",true,true],{"tool":"get","args":{"i":1}},{"tool":"get","args":{"i":2}},{"tool":"get","args":{"i":3}},` +
		`"cannot reuse already awaited coroutine","tools.get: pass keyword arguments or one dict, not both",` +
		`"tools['odd-name']: pass keyword arguments or one dict, not 2 positional arguments",` +
		`"tools.get: the arguments are not plain JSON: args['s'] is a set, which is not JSON (make it a list)",` +
		`"can't send non-None value to a just-started coroutine","thrown",true,"<tool 'get'>","get"]`
	if got := g.value(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// Calls made: i=1, 2, 3 and 7 (sent to: made, never answered), none
	// for the calls never awaited (0, 4, 5, 6) or refused before the host.
	var made []string
	for _, c := range g.r.calls {
		made = append(made, c.Args)
	}
	if got, want := strings.Join(made, " "), `{"i":1} {"i":2} {"i":3} {"i":7}`; got != want {
		t.Fatalf("calls made %s, want %s", got, want)
	}
}

// A task waiting on a tool's call is cancelled as one waiting on a
// coroutine is: CancelledError inside, the task cancelled, the program
// going on.
func TestABI_callCancelled(t *testing.T) {
	g := newGuest(t)
	st := g.start(config{Code: `import asyncio
async def slow():
    try:
        return await tools.get(i=1)
    except asyncio.CancelledError:
        seen.append("cancelled inside")
        raise
seen = []
t = asyncio.create_task(slow())
await asyncio.sleep(0)
t.cancel()
try:
    await t
except asyncio.CancelledError:
    seen.append("cancelled")
r = await tools.get(i=2)
[seen, t.cancelled(), r["args"]]`, Tools: []string{"get"}})
	g.drive(st, echo)
	if got, want := g.value(), `[["cancelled inside","cancelled"],true,{"i":2}]`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// A program without top-level await runs at once, without a task
// (runtime.py's start): its outcomes are those of the same program run as a
// task (the variant with a top-level await of nothing): its result, its
// exceptions (SystemExit ending it before the tasks it made run,
// StopIteration as a task's coroutine turns it), and the tasks it made,
// which run after it (their logs), and a result that is a call not awaited.
func TestABI_withoutAwaitAsWithTask(t *testing.T) {
	for _, c := range []struct{ code, value, err string }{
		{"x = 2\nx * 21", "42", ""},
		{"x = 2", "<no result>", ""},
		{"raise StopIteration(5)", "", "RuntimeError: coroutine raised StopIteration"},
		{"import asyncio\nasync def side():\n    print('side')\nasyncio.get_running_loop().create_task(side())\nraise SystemExit(4)", "", "SystemExit: 4"},
		{"import asyncio\nasync def side():\n    print('side ran')\nt = asyncio.get_running_loop().create_task(side())\n'main'", `"main"`, ""},
		{"tools.get()", "", "result is a coroutine, which is not JSON"},
		{"1/0", "", "ZeroDivisionError: division by zero"},
	} {
		for _, variant := range []string{c.code, "import asyncio as _a\nawait _a.sleep(0)\n" + c.code} {
			t.Run(variant, func(t *testing.T) {
				g := runCode(t, variant, "get")
				if c.err != "" {
					if e := g.failure(); !strings.Contains(e.Message, c.err) {
						t.Fatalf("error %+v, want %q", e, c.err)
					}
				} else if got := g.value(); got != c.value {
					t.Fatalf("got %s, want %s", got, c.value)
				}
				if strings.Contains(c.code, "side ran") && !slices.Contains(g.r.logs, "side ran") {
					t.Fatalf("logs %q: the task the program made did not run", g.r.logs)
				}
				if strings.Contains(c.code, "SystemExit") && slices.Contains(g.r.logs, "side") {
					t.Fatalf("logs %q: the task ran after SystemExit", g.r.logs)
				}
			})
		}
	}
}

// What a program can reach of the C loop and tools (module _ptcx, the
// call and wakeup types) fails as an exception, never a trap, however it is
// called: each program's outcome is a result or an error, and a program
// that breaks its own runtime (loop_init, tools_init) hurts only itself.
func TestABI_loopInternalsAbused(t *testing.T) {
	for _, code := range []string{
		"import _ptcx\n_ptcx.call_soon()",
		"import _ptcx, contextvars\nh = _ptcx.call_soon(print, 'x', context=contextvars.copy_context())\nh.cancel()\n[h.cancelled(), type(h).__name__]",
		"import _ptcx, contextvars\n_ptcx.call_soon(1, context=contextvars.copy_context())\nimport asyncio\nawait asyncio.sleep(0)\n'survived'",
		"import _ptcx, contextvars\ndef again():\n    _ptcx.step()\n_ptcx.call_soon(again, context=contextvars.copy_context())\nimport asyncio\nawait asyncio.sleep(0)\n'nested'",
		"import _ptcx\nrepr(type(_ptcx.call_soon))",
		"import _ptcx, contextvars\nh = _ptcx.call_soon(print, context=contextvars.copy_context())\ntype(h)()",
		"c = tools.get()\ntype(c)()",
		"type(tools.get)()",
		"import _ptcx, collections\n_ptcx.loop_init(collections.deque(), 1, 2, {}, 3, {}, 4, 5, ValueError)\nawait tools.get(i=1)",
		"import _ptcx\n_ptcx.loop_init(1, 2, 3, {}, 5, {}, 7, 8, ValueError)",
		"import _ptcx\n_ptcx.tools_init(int, {}, None, {})\nawait tools.get(i=1)",
		"import _ptcx\n_ptcx.tools_init(1, 2, 3, 4)",
		"c = tools.get(i=1)\nc.send(None)\nc.throw(ValueError('x'))",
		"c = tools.get(i=1)\nc.throw(1)",
		"c = tools.get(i=1)\nc.close()\nawait c",
		"import _ptcx\n_ptcx.make_tool(3)",
		"import _ptcx\nawait _ptcx.make_tool('unbound')()",
	} {
		t.Run(code, func(t *testing.T) {
			g := newGuest(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			g.r.ctx = ctx
			g.r.bound = map[string]bool{"get": true}
			st, err := g.tryRun(config{Code: code, Tools: []string{"get"}}, 10)
			if err != nil {
				t.Fatalf("trapped: %v; host failures %v", err, g.r.failures)
			}
			if st == 2 && g.r.errJSON == nil || st == 0 && g.r.errJSON != nil {
				t.Fatalf("status %d, error %v", st, g.r.errJSON)
			}
			if st == 2 && g.failure().Kind != "exception" {
				t.Fatalf("error %s, want an exception", *g.r.errJSON)
			}
		})
	}
}

// tryRun starts cfg's program and answers its calls with 1, at most n of
// them, as long as it stays pending: the last status, or the trap.
func (g *guest) tryRun(cfg config, n int) (int32, error) {
	b, _ := json.Marshal(cfg)
	st, err := g.try("ptcx_start", g.write(b), uint64(len(b)))
	for i := 0; err == nil && st == 1 && i < n && len(g.r.calls) > 0; i++ {
		c := g.r.calls[0]
		g.r.calls = g.r.calls[1:]
		st, err = g.try("ptcx_resume", uint64(c.ID), 1, g.write([]byte("1")), 1)
	}
	return st, err
}

// A call dropped without being awaited never runs, and says so in the
// logs, as CPython warns of a coroutine never awaited; an awaited one, a
// task's, or one closed says nothing.
func TestABI_callNeverAwaitedWarns(t *testing.T) {
	g := runCode(t, "import asyncio\ntools.get(i=1)\nawait asyncio.create_task(tools.get(i=2))\nc = tools.get(i=3)\nc.close()\ndel c\n'done'", "get")
	if got := g.value(); got != `"done"` {
		t.Fatalf("result %s", got)
	}
	var warned []string
	for _, l := range g.r.logs {
		if strings.Contains(l, "never awaited") {
			warned = append(warned, l)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "RuntimeWarning: the call tools.get(...) was never awaited, so it never ran") {
		t.Fatalf("warnings %q in logs %q", warned, g.r.logs)
	}
	if len(g.r.calls) != 1 || g.r.calls[0].Args != `{"i":2}` {
		t.Fatalf("calls %+v", g.r.calls)
	}
}

// TestABI_awaitables: every kind of awaitable hands the awaiting frame its
// value or its exception, suspended or not: asyncio's futures (answered
// later, failed, done already, cancelled), a tool's call, an __await__
// that is a generator, one that is a plain iterator ending in
// StopIteration(value), a @types.coroutine generator, a coroutine; a
// coroutine waiting on a future sent a value other than None (which the
// future's iterator ignores) once it is done; a task cancelled while it
// waits (the exception thrown into the future's iterator). And the
// awaits of a future and of a call make no StopIteration (patches/send.patch:
// SEND takes asyncio's future iterator's am_send, as PyIter_Send does), which
// sys.monitoring's RAISE event would see; a plain iterator's end still
// raises one.
func TestABI_awaitables(t *testing.T) {
	g := runCode(t, `
import asyncio, sys, types
loop = asyncio.get_running_loop()
out = []
f = loop.create_future()
loop.call_soon(f.set_result, "later")
out.append(await f)
f = loop.create_future()
loop.call_soon(f.set_exception, KeyError("k"))
try:
    await f
except KeyError as e:
    out.append("KeyError " + str(e))
f = loop.create_future()
f.set_result("done already")
out.append(await f)
f = loop.create_future()
f.cancel()
try:
    await f
except asyncio.CancelledError:
    out.append("cancelled")
out.append((await tools.get(i=1))["args"])
class Gen:
    def __await__(self):
        yield
        return "generator __await__"
out.append(await Gen())
class It:
    n = 0
    def __iter__(self):
        return self
    def __next__(self):
        self.n += 1
        if self.n < 3:
            return None
        raise StopIteration("iterator __await__")
class ItAwait:
    def __await__(self):
        return It()
out.append(await ItAwait())
@types.coroutine
def old():
    yield
    return "types.coroutine"
out.append(await old())
async def coro():
    await asyncio.sleep(0)
    return "coroutine"
out.append(await coro())
f = loop.create_future()
async def waits():
    return await f
c = waits()
first = c.send(None)
f.set_result("sent a value")
try:
    c.send(5)
except StopIteration as e:
    out.append([first is f, e.value])
async def never():
    await loop.create_future()
t = asyncio.ensure_future(never())
await asyncio.sleep(0)
t.cancel()
try:
    await t
except asyncio.CancelledError:
    out.append("task cancelled")
raised = []
M = sys.monitoring
M.use_tool_id(3, "test")
M.register_callback(3, M.events.RAISE, lambda code, offset, exc: raised.append(type(exc).__name__))
M.set_events(3, M.events.RAISE)
f = loop.create_future()
loop.call_soon(f.set_result, 1)
await f
seen = [len(raised)]
await tools.get(i=2)
seen.append(len(raised))
await ItAwait()
seen.append(raised[seen[-1]:])
M.set_events(3, 0)
M.free_tool_id(3)
out.append(seen)
out`, "get")
	// The plain iterator's StopIteration is seen twice: raised in __next__,
	// and again where the await takes it.
	want := `["later","KeyError 'k'","done already","cancelled",{"i":1},"generator __await__","iterator __await__",` +
		`"types.coroutine","coroutine",[true,"sent a value"],"task cancelled",[0,0,["StopIteration","StopIteration"]]]`
	if got := g.value(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
