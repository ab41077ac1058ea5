package wasmhost_test

import (
	"context"
	"encoding/json"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

func TestRuntime_Run_callsFiltersLogsAndReturns(t *testing.T) {
	rt := sharedRuntime(t)
	out, re, d := runJS(t, rt, `
const files = (await tools.echo({files: ["a.go", "b.txt", "c.go"]})).files;
const sizes = await tools.echo({sizes: {"a.go": 10, "c.go": 30}});
const goFiles = files.filter((f) => f.endsWith(".go"));
console.log("found", goFiles.length, "go files");
return goFiles.map((f) => ({file: f, size: sizes.sizes[f]}));
`, api.Limits{})
	require.Nil(t, re)
	require.Equal(t, []string{"found 2 go files"}, out.Logs)
	require.JSONEq(t, `[{"file":"a.go","size":10},{"file":"c.go","size":30}]`, string(out.Result))
	require.Equal(t, 2, out.Stats.Calls)
	require.Positive(t, out.Stats.Compute)
	require.GreaterOrEqual(t, out.Stats.Wall, out.Stats.Compute)
	require.Positive(t, out.Stats.Memory)
	calls := d.seen()
	require.Len(t, calls, 2)
	require.Equal(t, "echo", calls[0].Name)
	require.JSONEq(t, `{"files":["a.go","b.txt","c.go"]}`, string(calls[0].Args))
}

func TestRuntime_Run_promiseAllOverlaps(t *testing.T) {
	rt := sharedRuntime(t)
	out, re, d := runJS(t, rt, `
return await Promise.all([tools.slow({ms: 50}), tools.slow({ms: 50}), tools.slow({ms: 50})]);
`, api.Limits{})
	require.Nil(t, re)
	require.Len(t, d.seen(), 3)
	var spans []struct{ Started, Finished int64 }
	require.NoError(t, json.Unmarshal(out.Result, &spans))
	require.Len(t, spans, 3)
	// All three were dispatched before the first finished: they overlapped.
	sort.Slice(spans, func(i, j int) bool { return spans[i].Started < spans[j].Started })
	for _, s := range spans[1:] {
		require.Less(t, s.Started, spans[0].Finished, "calls ran one after another: %+v", spans)
	}
}

func TestRuntime_Run_toolCallError(t *testing.T) {
	rt := sharedRuntime(t)
	tests := []struct {
		name, js, want string
	}{
		{"at once", `try { await tools.fail({message: "no such file"}) } catch (e) {
			return {name: e.name, toolName: e.toolName, message: e.message, isToolCallError: e instanceof ToolCallError, isError: e instanceof Error}
		}`, `{"name":"ToolCallError","toolName":"fail","message":"no such file","isToolCallError":true,"isError":true}`},
		{"from another goroutine", `try { await tools.failLater() } catch (e) { return [e.name, e.toolName, e.message] }`,
			`["ToolCallError","failLater","failed later"]`},
		{"in Promise.allSettled", `const r = await Promise.allSettled([tools.echo({a: 1}), tools.fail({message: "x"})]);
			return r.map((s) => s.status === "fulfilled" ? s.value : s.reason.toolName)`, `[{"a":1},"fail"]`},
		{"constructible by programs", `const e = new ToolCallError("m", "t"); return [e.name, e.message, e.toolName]`, `["ToolCallError","m","t"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, re, _ := runJS(t, rt, tt.js, api.Limits{})
			require.Nil(t, re)
			require.JSONEq(t, tt.want, string(out.Result))
		})
	}
}

func TestRuntime_Run_uncaughtToolCallError(t *testing.T) {
	_, re, _ := runJS(t, sharedRuntime(t), `await tools.fail({message: "denied: not allowed"})`, api.Limits{})
	require.NotNil(t, re)
	require.Equal(t, api.KindException, re.Kind)
	require.Equal(t, "ToolCallError: denied: not allowed", re.Message)
}

func TestRuntime_Run_results(t *testing.T) {
	rt := sharedRuntime(t)
	tests := []struct {
		name, js, want string
	}{
		{"undefined is no result", `const x = 1;`, ``},
		{"null", `return null`, `null`},
		{"string", `return "héllo\n"`, `"héllo\n"`},
		{"number", `return 1.5`, `1.5`},
		{"undefined property left out", `return {a: 1, b: undefined}`, `{"a":1}`},
		{"nested", `return {a: [1, {b: [true, null, "x"]}], "odd key": 2}`, `{"a":[1,{"b":[true,null,"x"]}],"odd key":2}`},
		{"null prototype", `const o = Object.create(null); o.x = 1; return o`, `{"x":1}`},
		{"__proto__ key", `return JSON.parse('{"__proto__": 1}')`, `{"__proto__":1}`},
		{"tool result value", `return await tools.echo({deep: {list: [1, 2, 3]}})`, `{"deep":{"list":[1,2,3]}}`},
		{"top-level await and using", `const r = await Promise.resolve(2); { using x = {[Symbol.dispose]() {}}; } return r`, `2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, re, _ := runJS(t, rt, tt.js, api.Limits{})
			require.Nil(t, re)
			if tt.want == "" {
				require.Nil(t, out.Result)
				return
			}
			require.JSONEq(t, tt.want, string(out.Result))
		})
	}
}

func TestRuntime_Run_toolArguments(t *testing.T) {
	rt := sharedRuntime(t)
	tests := []struct {
		name, js, want string
	}{
		{"no arguments are an empty object", `await tools.echo()`, `{}`},
		{"odd names", `await tools.echo({"a b": 1, "é": [1.5, -0, "\u2028"]})`, `{"a b":1,"é":[1.5,0,"\u2028"]}`},
		{"getters are read once", `let n = 0; await tools.echo({get x() { return ++n }})`, `{"x":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, re, d := runJS(t, rt, tt.js, api.Limits{})
			require.Nil(t, re)
			require.Len(t, d.seen(), 1)
			require.JSONEq(t, tt.want, string(d.seen()[0].Args))
		})
	}
}

func TestRuntime_Run_unusualToolNames(t *testing.T) {
	names := []string{"odd.name-x", "with space", "ünïcode", "then"}
	var got []string
	d := wasmhost.DispatcherFunc(func(name string, args json.RawMessage, done func(wasmhost.CallResult)) {
		got = append(got, name)
		done(wasmhost.CallResult{OK: true, Value: json.RawMessage(`"` + name + `"`)})
	})
	// A tool named then is reached through tools.$call only, so that tools
	// is never a thenable.
	out, err := sharedRuntime(t).Run(context.Background(), wasmhost.Program{JS: `
return [await tools["odd.name-x"](), await tools["with space"](), await tools.ünïcode(), Object.keys(tools), await tools.$call("then")];
`, Tools: names}, d)
	require.NoError(t, err)
	require.Equal(t, names, got)
	require.JSONEq(t, `["odd.name-x","with space","ünïcode",["odd.name-x","with space","ünïcode"],"then"]`, string(out.Result))
}

// A tool name given twice or not valid UTF-8 is refused before the guest
// runs, with the name in the message.
func TestRuntime_Run_badToolNames(t *testing.T) {
	for _, tt := range []struct {
		names []string
		want  string
	}{
		{[]string{"a", "b", "a"}, `tool name "a" is given twice in Program.Tools`},
		{[]string{"x.y", "x.y"}, `tool name "x.y" is given twice`},
		{[]string{"ok", "\xff"}, `tool name "\xff" is not valid UTF-8`},
	} {
		_, err := sharedRuntime(t).Run(context.Background(), wasmhost.Program{JS: `return 1`, Tools: tt.names}, echo)
		require.ErrorContains(t, err, tt.want, "%q", tt.names)
	}
}

// Each tool's function is frozen, named after its tool, and bound as an
// enumerable, read-only, non-configurable property of tools; dotted names
// get their namespaces; tools itself is frozen.
func TestRuntime_Run_toolFunctions(t *testing.T) {
	out, err := sharedRuntime(t).Run(context.Background(), wasmhost.Program{JS: `
const d = Object.getOwnPropertyDescriptor(tools, "a_b");
const f = tools.a_b, n = Object.getOwnPropertyDescriptor(f, "name"), l = Object.getOwnPropertyDescriptor(f, "length");
f.extra = 1;
return [d.enumerable, d.writable, d.configurable, Object.isFrozen(f), n.value, n.writable, n.configurable,
  l.value, l.configurable, f.extra === undefined, Object.isFrozen(tools), Object.keys(tools),
  typeof tools.fs.read, tools.fs.read === tools["fs.read"], tools.fs.read.name, await tools.a_b({x: 1})]
`, Tools: []string{"a_b", "fs.read", "fs.write"}}, echo)
	require.NoError(t, err)
	require.JSONEq(t, `[true,false,false,true,"a_b",false,false,1,false,true,true,["a_b","fs.read","fs.write"],
		"function",true,"fs.read",{"x":1}]`, string(out.Result))
}

func TestRuntime_Run_console(t *testing.T) {
	rt := sharedRuntime(t)
	tests := []struct {
		name, js string
		want     []string
	}{
		{"strings raw", `console.log("a", "b\nc")`, []string{"a b\nc"}},
		{"levels", `console.info("i"); console.debug("d"); console.warn("w"); console.error("e")`,
			[]string{"i", "d", "[warn] w", "[error] e"}},
		{"values", `console.log(1, -0, 2n, true, null, undefined, Symbol("s"), "x")`,
			[]string{`1 -0 2n true null undefined Symbol(s) x`}},
		{"objects", `console.log({a: [1, "two", {b: null}], "odd key": 1}, [])`,
			[]string{`{a: [1, "two", {b: null}], "odd key": 1} []`}},
		{"cycles marked", `const a = {x: 1}; a.self = a; console.log(a)`, []string{`{x: 1, self: [Circular]}`}},
		{"depth capped", `console.log({a: {b: {c: {d: {e: {f: 1}}}}}})`, []string{`{a: {b: {c: {d: [Object]}}}}`}},
		{"length capped", `console.log(Array.from({length: 102}, (_, i) => i))`,
			[]string{"[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, ... 2 more]"}},
		{"builtins", `console.log(new Map([["k", 1]]), new Set([1]), new Date(0), /x/g, function f() {}, class K {})`,
			[]string{`Map(1) {"k" => 1} Set(1) {1} 1970-01-01T00:00:00.000Z /x/g [Function: f] [Function: K]`}},
		{"class instances and getters", `class P { constructor() { this.x = 1 } }; console.log(new P(), {get g() { throw 1 }})`,
			[]string{`P {x: 1} {g: [Getter]}`}},
		{"errors with their stack", "try {\n  null.x\n} catch (e) { console.log(e) }",
			[]string{"TypeError: cannot read property 'x' of null\n    at <anonymous> (<program>:2:3)"}},
		{"long nested strings capped", `console.log(["x".repeat(1005)])`,
			[]string{`["` + repeat("x", 1000) + `"... (5 more characters)]`}},
		{"tools", `console.log(tools)`, []string{`{echo: [Function: echo], slow: [Function: slow], fail: [Function: fail], failLater: [Function: failLater], hang: [Function: hang]}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, re, _ := runJS(t, rt, tt.js, api.Limits{})
			require.Nil(t, re)
			require.Equal(t, tt.want, out.Logs)
		})
	}
}

func repeat(s string, n int) string {
	b := make([]byte, 0, len(s)*n)
	for range n {
		b = append(b, s...)
	}
	return string(b)
}

func TestRuntime_Run_preludeCannotBeBroken(t *testing.T) {
	// Replacing the intrinsics the prelude uses breaks only the program's own
	// use of them: its nested calls are still checked, sent and resolved.
	out, re, d := runJS(t, sharedRuntime(t), `
JSON.stringify = () => "broken";
JSON.parse = () => "broken";
Object.keys = () => [];
Array.isArray = () => false;
Promise.prototype.then = function () { throw new Error("broken then") };
String.prototype.slice = () => "broken";
const r = await tools.echo({a: [1, 2], b: {c: "x"}, gone: undefined});
let rejected = "";
try { await tools.echo({f: [undefined]}) } catch (e) { rejected = e.message }
return {r, rejected, frozen: Object.isFrozen(tools) && Object.isFrozen(ToolCallError.prototype)};
`, api.Limits{})
	require.Nil(t, re)
	require.Len(t, d.seen(), 1)
	require.JSONEq(t, `{"a":[1,2],"b":{"c":"x"}}`, string(d.seen()[0].Args))
	require.JSONEq(t, `{"r":{"a":[1,2],"b":{"c":"x"}},"rejected":"tools.echo: the arguments are not plain JSON: args.f[0] is undefined, which JSON cannot represent (leave it out or use null)","frozen":true}`,
		string(out.Result))
}

func TestRuntime_Run_globalsAreReadOnly(t *testing.T) {
	rt := sharedRuntime(t)
	for _, name := range []string{"tools", "console", "ToolCallError", "setTimeout", "clearTimeout"} {
		t.Run(name, func(t *testing.T) {
			out, re, _ := runJS(t, rt, `"use strict"; try { globalThis.`+name+` = 1; return "replaced" } catch (e) { return e.name }`, api.Limits{})
			require.Nil(t, re)
			require.JSONEq(t, `"TypeError"`, string(out.Result))
		})
	}
}
