package wasmhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"

	"github.com/ptcx/ptcx/wasmhost"
)

// badInputs are the programs of issue 3's "bad input" list, each with the
// failure it must end in.
var badInputs = []struct {
	name    string
	js      string
	limits  api.Limits
	kind    api.Kind
	message string // a substring of RunError.Message
	check   func(t *testing.T, re *wasmhost.RunError, out wasmhost.Outcome)
}{
	{name: "syntax error", js: "const a = 1;\nconst b = ;", kind: api.KindSyntax,
		message: "SyntaxError: unexpected token in expression: ';'",
		check: func(t *testing.T, re *wasmhost.RunError, _ wasmhost.Outcome) {
			require.Equal(t, 2, re.Line)
			require.Equal(t, 11, re.Column)
		}},
	{name: "syntax error on line 1", js: "const = 5", kind: api.KindSyntax, message: "SyntaxError: ",
		check: func(t *testing.T, re *wasmhost.RunError, _ wasmhost.Outcome) {
			require.Equal(t, 1, re.Line)
			require.Equal(t, 7, re.Column)
		}},
	{name: "bad regular expression", js: "const a = 1;\n  const r = /a/gg", kind: api.KindSyntax,
		message: "SyntaxError: invalid regular expression flags",
		check: func(t *testing.T, re *wasmhost.RunError, _ wasmhost.Outcome) {
			// The engine's own place for it (guest/glue/regexp.patch): none before.
			require.Equal(t, [2]int{2, 13}, [2]int{re.Line, re.Column})
		}},
	{name: "static import", js: `import fs from "fs"`, kind: api.KindSyntax},
	{name: "thrown Error", js: "console.log('before');\n  throw new Error('boom')", kind: api.KindException,
		message: "Error: boom",
		check: func(t *testing.T, re *wasmhost.RunError, _ wasmhost.Outcome) {
			require.Equal(t, "    at <anonymous> (<program>:2:13)", re.Stack)
			require.Equal(t, []string{"before"}, re.Logs)
		}},
	{name: "thrown Error on line 1", js: "throw new TypeError('t')", kind: api.KindException, message: "TypeError: t",
		check: func(t *testing.T, re *wasmhost.RunError, _ wasmhost.Outcome) {
			require.Equal(t, "    at <anonymous> (<program>:1:11)", re.Stack)
		}},
	{name: "thrown number", js: `throw 42`, kind: api.KindException, message: "the program threw a value that is not an Error: 42"},
	{name: "thrown string", js: `throw "oops"`, kind: api.KindException, message: `not an Error: "oops"`},
	{name: "thrown object", js: `throw {code: 7}`, kind: api.KindException, message: `not an Error: {code: 7}`},
	{name: "thrown null", js: `throw null`, kind: api.KindException, message: `not an Error: null`},
	{name: "rejected with undefined", js: `await Promise.reject()`, kind: api.KindException, message: `not an Error: undefined`},
	{name: "unhandled rejection", js: `Promise.reject(new Error("lost")); return 1`, kind: api.KindException,
		message: "unhandled promise rejection: Error: lost"},
	{name: "unhandled tool failure", js: `tools.fail({message: "x"}); await new Promise((r) => setTimeout(r, 10)); return 1`,
		kind: api.KindException, message: "unhandled promise rejection: ToolCallError: x"},
	{name: "infinite loop", js: `while (true) {}`, limits: api.Limits{ComputeTime: 200 * time.Millisecond},
		kind: api.KindTimeout, message: "compute time limit of 200ms",
		check: func(t *testing.T, re *wasmhost.RunError, out wasmhost.Outcome) {
			require.ErrorIs(t, re, context.DeadlineExceeded)
			require.GreaterOrEqual(t, out.Stats.Compute, 200*time.Millisecond)
		}},
	{name: "infinite loop after awaiting", js: `await tools.echo({}); for (;;) {}`, limits: api.Limits{ComputeTime: 200 * time.Millisecond},
		kind: api.KindTimeout, message: "compute time"},
	{name: "allocation until out of memory", js: `const a = []; for (let i = 0; ; i++) a.push({i, s: "item " + i})`,
		limits: api.Limits{MemoryBytes: 32 << 20}, kind: api.KindMemory,
		message: "out of memory: the program needs more than its memory limit of 32 MiB"},
	{name: "typed arrays until out of memory", js: `const a = []; for (;;) a.push(new Uint8Array(4 << 20))`,
		limits: api.Limits{MemoryBytes: 32 << 20}, kind: api.KindMemory, message: "out of memory"},
	{name: "microtasks until out of memory", js: `const spin = () => Promise.resolve().then(() => spin()); spin(); await new Promise(() => {})`,
		limits: api.Limits{MemoryBytes: 32 << 20}, kind: api.KindMemory,
		message: "out of memory: the program needs more than its memory limit of 32 MiB",
		check: func(t *testing.T, _ *wasmhost.RunError, out wasmhost.Outcome) {
			require.Positive(t, out.Stats.Compute)
			require.Greater(t, out.Stats.Memory, int64(16<<20))
		}},
	{name: "deep recursion", js: `function f(n) { return f(n + 1) + 1 } return f(0)`, kind: api.KindException,
		message: "RangeError: Maximum call stack size exceeded"},
	{name: "deeply nested JSON", js: `return JSON.parse("[".repeat(100000))`, kind: api.KindException,
		message: "RangeError: Maximum call stack size exceeded"},
	{name: "catastrophic regular expression", js: `return /^(a+)+$/.test("a".repeat(40) + "b")`,
		limits: api.Limits{ComputeTime: 200 * time.Millisecond}, kind: api.KindTimeout, message: "compute time"},
	{name: "never settles", js: `await new Promise(() => {})`, kind: api.KindException,
		message: "the program is awaiting a promise that nothing can resolve"},
	{name: "never settles after a call", js: `await tools.echo({}); await new Promise(() => {})`, kind: api.KindException,
		message: "awaiting a promise that nothing can resolve"},
	{name: "console flood", js: `for (;;) console.log("flood")`, limits: api.Limits{OutputBytes: 100},
		kind: api.KindOutputLimit, message: "console output exceeded the output limit of 100 bytes",
		check: func(t *testing.T, re *wasmhost.RunError, _ wasmhost.Outcome) {
			require.Len(t, re.Logs, 17) // 5 bytes, 15 of 6 (a newline each), then a newline and 4 bytes
			require.Equal(t, "flood", re.Logs[0])
			require.Equal(t, "floo", re.Logs[16])
		}},
	{name: "one huge line", js: `console.log("é".repeat(1 << 20))`, limits: api.Limits{OutputBytes: 100},
		kind: api.KindOutputLimit,
		check: func(t *testing.T, re *wasmhost.RunError, _ wasmhost.Outcome) {
			require.Equal(t, []string{strings.Repeat("é", 50)}, re.Logs) // the first line has no newline: all 100 bytes
		}},
	{name: "result over the output limit", js: `console.log("log"); return "x".repeat(200)`, limits: api.Limits{OutputBytes: 100},
		kind: api.KindOutputLimit, message: "the result (200 bytes as shown) does not fit the output limit of 100 bytes",
		check: func(t *testing.T, re *wasmhost.RunError, _ wasmhost.Outcome) {
			require.Equal(t, []string{"log"}, re.Logs)
		}},
	{name: "cyclic result", js: `const a = {b: [1]}; a.b.push(a); return a`, kind: api.KindInvalidOutput,
		message: "result.b[1] is a circular reference"},
	{name: "BigInt result", js: `return [1n]`, kind: api.KindInvalidOutput, message: "result[0] is a BigInt (1n)"},
	{name: "BigInt past a conversion", js: `return {when: new Date(0), m: new Map([["k", [2n]]])}`, kind: api.KindInvalidOutput,
		message: "the program's result is not JSON: result.m.k[0] is a BigInt (2n)"},
	{name: "throwing getter in result", js: `return {get x() { throw new Error("no") }}`, kind: api.KindInvalidOutput,
		message: "result.x could not be read (Error: no)"},
	{name: "a million nested calls", js: `for (let i = 0; i < 1e6; i++) await tools.echo({i})`,
		limits: api.Limits{MaxCalls: 1000}, kind: api.KindException,
		message: "ToolCallError: this program reached its limit of 1000 nested calls",
		check: func(t *testing.T, _ *wasmhost.RunError, out wasmhost.Outcome) {
			require.Equal(t, 1000, out.Stats.Calls)
		}},
	{name: "too many pending calls", js: `await Promise.all(Array.from({length: 10000}, () => tools.hang()))`,
		kind: api.KindException, message: "too many nested calls pending at once (the limit is 128)",
		check: func(t *testing.T, _ *wasmhost.RunError, out wasmhost.Outcome) {
			require.Equal(t, 128, out.Stats.Calls)
		}},
	{name: "unbound tool", js: `await tools.nope({})`, kind: api.KindException,
		message: "TypeError: tools.nope is not a bound tool; the bound tools are: echo, slow, fail, failLater, hang"},
	{name: "unbound tool with an odd name", js: `await tools["a-b"]()`, kind: api.KindException,
		message: `tools["a-b"] is not a bound tool`},
	{name: "run_code", js: `await tools.run_code({code: "1"})`, kind: api.KindException,
		message: "tools.run_code is not available: run_code cannot be called from inside a program"},
	{name: "undefined array element in arguments", js: `await tools.echo({path: [1, undefined]})`, kind: api.KindException,
		message: "TypeError: tools.echo: the arguments are not plain JSON: args.path[1] is undefined"},
	{name: "function argument", js: `await tools.echo({cb: () => 1})`, kind: api.KindException, message: "args.cb is a function"},
	{name: "BigInt argument", js: `await tools.echo({n: [1, 2n]})`, kind: api.KindException, message: "args.n[1] is a BigInt"},
	{name: "symbol argument", js: `await tools.echo({s: Symbol()})`, kind: api.KindException, message: "args.s is a symbol"},
	{name: "cyclic argument", js: `const a = {}; a.a = a; await tools.echo(a)`, kind: api.KindException, message: "args.a is a circular reference"},
	{name: "throwing getter argument", js: `await tools.echo({get x() { throw new Error("g") }})`, kind: api.KindException,
		message: "args.x could not be read (Error: g)"},
	{name: "non-plain argument", js: `await tools.echo({d: new Date()})`, kind: api.KindException, message: "args.d is a Date"},
	{name: "require", js: `require("fs")`, kind: api.KindException, message: "ReferenceError: require is not defined"},
	{name: "process", js: `return process.env`, kind: api.KindException, message: "ReferenceError: process is not defined"},
	{name: "dynamic import", js: `await import("fs")`, kind: api.KindException, message: "cannot import 'fs': programs have no modules"},
	{name: "fetch", js: `await fetch("http://example.com")`, kind: api.KindException, message: "ReferenceError: fetch is not defined"},
	{name: "std", js: `std.open("/etc/passwd", "r")`, kind: api.KindException, message: "ReferenceError: std is not defined"},
	{name: "os", js: `os.exec(["ls"])`, kind: api.KindException, message: "ReferenceError: os is not defined"},
	{name: "timer callback throws", js: `setTimeout(() => { throw new Error("late") }, 1); await new Promise((r) => setTimeout(r, 20))`,
		kind: api.KindException, message: "uncaught exception in a setTimeout callback: Error: late"},
}

func TestRuntime_Run_badInput(t *testing.T) {
	rt := sharedRuntime(t)
	for _, tt := range badInputs {
		t.Run(tt.name, func(t *testing.T) {
			out, re, _ := runJS(t, rt, tt.js, tt.limits)
			require.NotNil(t, re, "the program succeeded: %s", out.Result)
			require.Equal(t, tt.kind, re.Kind, "message: %s", re.Message)
			require.Contains(t, re.Message, tt.message)
			if tt.check != nil {
				tt.check(t, re, out)
			}
			requireHealthy(t, rt)
		})
	}
}

// Long loops inside one native built-in of the engine never reach QuickJS's
// interrupt handler; the metered guest still polls the host from them, so
// they stop at the deadline: the host never has to abandon the guest and
// leave it running (which it does when a guest has not stopped 250 ms past
// its deadline).
func TestRuntime_Run_nativeLoopTimesOut(t *testing.T) {
	rt := sharedRuntime(t)
	for _, js := range []string{
		`return String(7n ** 300000n).length`,                            // BigInt arithmetic: seconds without a poll
		`return "x".repeat(1 << 27).length`,                              // string building: bulk copies
		`const a = new Uint8Array(1 << 26); for (;;) a.copyWithin(0, 1)`, // one 64 MiB memory.copy per iteration
		`const a = new Uint8Array(1 << 26); for (;;) a.fill(7)`,          // one 64 MiB memory.fill per iteration
	} {
		t.Run(js, func(t *testing.T) {
			out, re, _ := runJS(t, rt, js, api.Limits{ComputeTime: 100 * time.Millisecond})
			require.NotNil(t, re, "finished: %s", out.Result)
			require.Equal(t, api.KindTimeout, re.Kind, re.Message)
			require.Contains(t, re.Message, "compute time limit of 100ms")
			require.NotErrorIs(t, re, wasmhost.ErrAbandoned, "the guest was stopped, not abandoned")
			requireHealthy(t, rt)
		})
	}
}

func TestRuntime_Run_caughtOutOfMemory(t *testing.T) {
	out, re, _ := runJS(t, sharedRuntime(t), `
let a = [];
try { for (;;) a.push(new Uint8Array(1 << 20)) } catch (e) { a = null; return String(e) }
`, api.Limits{MemoryBytes: 32 << 20})
	require.Nil(t, re)
	require.JSONEq(t, `"InternalError: out of memory"`, string(out.Result))
}

func TestRuntime_Run_caughtStackOverflow(t *testing.T) {
	out, re, _ := runJS(t, sharedRuntime(t), `
let depth = 0;
function f() { depth++; f() }
try { f() } catch (e) { return {name: e.name, deep: depth > 500} }
`, api.Limits{})
	require.Nil(t, re)
	require.JSONEq(t, `{"name":"RangeError","deep":true}`, string(out.Result))
}

func TestRuntime_Run_onlyTheSandboxGlobals(t *testing.T) {
	out, re, _ := runJS(t, sharedRuntime(t), `return Object.getOwnPropertyNames(globalThis).sort()`, api.Limits{})
	require.Nil(t, re)
	// The ECMAScript globals, the few web ones QuickJS-NG adds, and ours.
	require.JSONEq(t, `["AggregateError","Array","ArrayBuffer","AsyncDisposableStack","BigInt","BigInt64Array",
		"BigUint64Array","Boolean","DOMException","DataView","Date","DisposableStack","Error","EvalError",
		"FinalizationRegistry","Float16Array","Float32Array","Float64Array","Function","Infinity","Int16Array",
		"Int32Array","Int8Array","InternalError","Iterator","JSON","Map","Math","NaN","Number","Object","Promise",
		"Proxy","RangeError","ReferenceError","Reflect","RegExp","Set","SharedArrayBuffer","String",
		"SuppressedError","Symbol","SyntaxError","ToolCallError","TypeError","URIError","Uint16Array",
		"Uint32Array","Uint8Array","Uint8ClampedArray","WeakMap","WeakRef","WeakSet","atob","btoa","clearTimeout",
		"console","decodeURI","decodeURIComponent","encodeURI","encodeURIComponent","escape","eval","globalThis",
		"isFinite","isNaN","parseFloat","parseInt","performance","queueMicrotask","setTimeout","tools",
		"undefined","unescape"]`, string(out.Result))
}

func TestRuntime_Run_wallTimeout(t *testing.T) {
	_, re, _ := runJS(t, sharedRuntime(t), `await tools.hang()`, api.Limits{WallTime: 100 * time.Millisecond})
	require.NotNil(t, re)
	require.Equal(t, api.KindTimeout, re.Kind)
	require.Contains(t, re.Message, "wall time limit of 100ms")
	require.ErrorIs(t, re, context.DeadlineExceeded)
}

func TestRuntime_Run_cancelled(t *testing.T) {
	rt := sharedRuntime(t)
	ctx, cancel := context.WithCancel(context.Background())
	d := wasmhost.DispatcherFunc(func(string, json.RawMessage, func(wasmhost.CallResult)) { cancel() })
	_, err := rt.Run(ctx, wasmhost.Program{JS: `await tools.x()`, Tools: []string{"x"}}, d)
	var re *wasmhost.RunError
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, api.KindAbort, re.Kind)
	require.ErrorIs(t, err, context.Canceled)

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = rt.Run(ctx, wasmhost.Program{JS: `for (;;) {}`}, d)
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, api.KindAbort, re.Kind)
	requireHealthy(t, rt)
}

func TestRuntime_Run_dispatcherPanics(t *testing.T) {
	rt := newRuntime(t, testConfig())
	d := wasmhost.DispatcherFunc(func(string, json.RawMessage, func(wasmhost.CallResult)) { panic("dispatcher bug") })
	_, err := rt.Run(context.Background(), wasmhost.Program{JS: `await tools.x()`, Tools: []string{"x"}}, d)
	var re *wasmhost.RunError
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, api.KindTrap, re.Kind)
	require.Equal(t, "the host failed to dispatch a nested call", re.Message)
	require.ErrorContains(t, re.Cause, "dispatcher bug")
	requireHealthy(t, rt)
}
