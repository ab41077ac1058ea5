package wasmhost_test

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// Issue 9, item 7: no function of the prelude or of the natives is reachable
// from a program, a program cannot change what a prelude function does, the
// plain-JSON check of tool arguments cannot be skipped, and a program cannot
// make its run end as a trap. These tests try every route a program has
// into the prelude; the programs report what they obtained and the tests
// require that it is nothing.

// probeJS is the part of the introspection programs that sets the traps:
// note records every function obtained that the program did not make
// itself, probe tries every stack-inspection route from where it is called,
// and hook makes a program function that probes when the prelude calls it.
const probeJS = `
const own = new Set();
const found = [], installs = [], nonString = [];
let prepCalls = 0, limitCalls = 0;
function mine(f) { own.add(f); return f; }
function note(route, v) {
  if (typeof v === "function" && !own.has(v)) found.push(route + ": " + String(v.name));
}
// prep calls every method a CallSite has, the way V8's API is used.
const prep = mine(function (err, sites) {
  prepCalls++;
  for (const s of sites) {
    for (let p = s; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      for (const k of Reflect.ownKeys(p)) {
        let v;
        try { v = s[k]; } catch (e) { continue; }
        if (typeof v === "function" && k !== "constructor") {
          try { note("CallSite." + String(k) + "()", v.call(s)); } catch (e) {}
        }
      }
    }
    for (const k of ["getFunction", "getThis", "getTypeName", "getMethodName", "getEvalOrigin"]) {
      try { note("CallSite." + k + "()", s[k]()); } catch (e) {}
    }
  }
  return "prepared";
});
function attempt(what, f) {
  try { f(); installs.push(what + ": ok"); } catch (e) { installs.push(what + ": " + e.name); }
}
attempt("assign", () => { Error.prepareStackTrace = prep; });
attempt("define", () => Object.defineProperty(Error, "prepareStackTrace", {value: prep, writable: true, configurable: true}));
attempt("setter", () => {
  const d = Object.getOwnPropertyDescriptor(Error, "prepareStackTrace");
  note("the prepareStackTrace setter", d.set);
  if (d.set) d.set.call(Error, prep);
});
attempt("inherited", () => { TypeError.prepareStackTrace = prep; });
attempt("Reflect.set", () => Reflect.set(Error, "prepareStackTrace", prep));
attempt("stackTraceLimit", () => {
  Error.stackTraceLimit = {valueOf: mine(function () { limitCalls++; probe("stackTraceLimit.valueOf"); return 20; })};
});
// probe tries the stack routes from where it runs; fn is the program
// function that called it, whose caller the prelude would be.
function probe(where, fn) {
  if (fn) {
    try { note(where + ": caller", fn.caller); } catch (e) {}
  }
  const e = new Error("probe");
  if (typeof e.stack !== "string" || e.stack === "prepared") nonString.push(where);
  const o = {};
  Error.captureStackTrace(o);
  if (typeof o.stack !== "string" || o.stack === "prepared") nonString.push(where + " (captureStackTrace)");
  for (const f of [console.log, setTimeout, clearTimeout, tools.echo, ToolCallError]) {
    const t = {};
    Error.captureStackTrace(t, f);
    note(where + ": captureStackTrace's stack", t.stack);
  }
}
// hook returns a program function that probes, whatever calls it.
function hook(where, ret) {
  const f = mine(function () {
    probe(where, f);
    note(where + ": arguments.callee.caller", arguments.callee.caller);
    note(where + ": this", this);
    for (let i = 0; i < arguments.length; i++) note(where + ": argument", arguments[i]);
    return typeof ret === "function" ? ret() : ret;
  });
  return f;
}
`

// routesJS makes the prelude call program code in every way it can, and
// creates errors inside the prelude, each a chance for the traps above.
const routesJS = `
const getter = (where, ret) => ({enumerable: true, configurable: true, get: hook(where, ret)});
// Tool arguments: natives.encode reads getters, in callTool.
await tools.echo(Object.defineProperty({}, "a", getter("an argument's getter", 1)));
// Refused arguments, whose refusal the prelude describes.
class K {}
Object.defineProperty(K, "name", getter("a constructor's name", "K"));
const refused = [
  {k: new K()},
  {p: Object.create(new Proxy({}, {getOwnPropertyDescriptor: hook("a prototype proxy's trap")}))},
  Object.defineProperty({}, "x", {enumerable: true, get: mine(function () {
    throw Object.create(Error.prototype, {name: getter("a thrown error's name", "E"), message: getter("a thrown error's message", "m")});
  })}),
  {f() {}}, {b: 1n}, {d: new Date(0)}, {m: new Map()}, {n: NaN}, {u: [undefined]},
];
const cycle = {}; cycle.self = cycle; refused.push(cycle);
refused.push(new Proxy({}, {ownKeys: hook("an argument proxy's trap", [])}));
for (const args of refused) {
  try { await tools.echo(args); found.push("refused arguments were sent"); }
  catch (e) { if (!(e instanceof TypeError) || !e.message.includes("not plain JSON")) found.push("refused with " + e); }
}
// console.log: the renderer reads array elements, names, descriptors.
const fn = function () {};
Object.defineProperty(fn, "name", getter("a function's name", "fn"));
console.log(
  Object.defineProperty([], 0, getter("an array element's getter", 1)),
  new Proxy({}, {ownKeys: hook("a logged proxy's ownKeys", []), getPrototypeOf: hook("a logged proxy's getPrototypeOf", null)}),
  Object.create(Error.prototype, {name: getter("a logged error's name", "E"), message: getter("a logged error's message", "m"),
    stack: getter("a logged error's stack", "s")}),
  fn, new Date(0), new Map([[1, 2]]), new Set([1]), /re/g, new K(), {x: {y: {z: {w: {v: 1}}}}},
);
// Timers: the delay's valueOf in setTimeout, the callback in fire.
await new Promise((resolve) => setTimeout(hook("a timer callback", resolve), {valueOf: hook("a timer delay's valueOf", 0)}, 1, 2));
try { setTimeout("not a function"); } catch (e) {}
clearTimeout({valueOf: hook("clearTimeout's id", 1)});
// ToolCallError: the tool name's toString in its constructor.
new ToolCallError("m", {toString: hook("a tool name's toString", "t")});
// A failing tool: the glue calls the prelude's toolError hook.
try { await tools.fail({message: "failed"}); } catch (e) {}
// tools: the proxy's traps and its refusals.
try { tools.nope; } catch (e) {}
try { tools.echo = 1; } catch (e) {}
try { tools.run_code; } catch (e) {}
const unbound = Object.getPrototypeOf(tools);
attempt("define on the tools proxy", () => Object.defineProperty(unbound, "then", {value: 1, configurable: true}));
attempt("set the tools proxy's prototype", () => Object.setPrototypeOf(unbound, {}));
for (const k of Reflect.ownKeys(unbound)) note("the tools proxy's target", unbound[k]);
// An async continuation.
await tools.echo({});
probe("after an await");
// Function.prototype.caller and .arguments of the prelude's functions.
for (const [name, f] of [["console.log", console.log], ["setTimeout", setTimeout], ["tools.echo", tools.echo], ["ToolCallError", ToolCallError]]) {
  try { note(name + ".caller", f.caller); } catch (e) {}
  try { const a = f.arguments; if (a) for (let i = 0; i < a.length; i++) note(name + ".arguments", a[i]); } catch (e) {}
}
// The source of the prelude's functions.
const sources = [];
for (const f of [console.log, console.error, setTimeout, clearTimeout, ToolCallError, ToolCallError.prototype.constructor, tools.echo]) {
  const s = Function.prototype.toString.call(f);
  if (!/^function [\w$]*\(\) \{\n    \[native code\]\n\}$/.test(s)) sources.push(s);
}
// Everything reachable from globalThis: own properties (values, getters,
// setters) and prototypes, named like a function of the prelude.
const graph = [];
const seen = new Set([globalThis]);
const queue = [[globalThis, "globalThis"]];
for (let i = 0; i < queue.length && i < 50000; i++) {
  const [o, path] = queue[i];
  const next = (v, p) => {
    if ((typeof v === "object" || typeof v === "function") && v !== null && !seen.has(v)) {
      seen.add(v);
      queue.push([v, p]);
      let name;
      try { name = v.name; } catch (e) {}
      if (typeof v === "function" && internalNames.includes(name)) graph.push(p + " (" + name + ")");
    }
  };
  next(Object.getPrototypeOf(o), path + ".[[Prototype]]");
  for (const k of Reflect.ownKeys(o)) {
    const d = Object.getOwnPropertyDescriptor(o, k);
    if (!d) continue;
    const p = path + "." + String(k);
    next(d.value, p);
    next(d.get, p + ".get");
    next(d.set, p + ".set");
  }
}
graph.sort();
`

// internalNames lists the names of the prelude's functions (its function
// declarations and hooks) and of the natives (glue/natives.c).
func internalNames(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("../guest/prelude.js")
	require.NoError(t, err)
	names := []string{"tools", "call", "log", "timerSet", "timerClear", "result", "error", "encode", // the natives
		"start", "toolError", "fire", "report"} // the hooks
	for _, m := range regexp.MustCompile(`function\s+([\w$]+)\s*\(`).FindAllStringSubmatch(string(src), -1) {
		names = append(names, m[1])
	}
	require.Greater(t, len(names), 30, "the prelude's function names were not found")
	return names
}

// introspectionReport is what the introspection programs report.
type introspectionReport struct {
	Found      []string `json:"found"`
	Installs   []string `json:"installs"`
	NonString  []string `json:"nonString"`
	PrepCalls  int      `json:"prepCalls"`
	LimitCalls int      `json:"limitCalls"`
	Prepare    string   `json:"prepare"`
	Limit      string   `json:"limit"`
	Sources    []string `json:"sources"`
	Graph      []string `json:"graph"`
}

func TestIntrospection_noPreludeFunctionIsReachable(t *testing.T) {
	names, err := json.Marshal(internalNames(t))
	require.NoError(t, err)
	// The report is built by a getter of the result, which the prelude
	// reads while it reports the outcome: one more route.
	js := "const internalNames = " + string(names) + ";\n" + probeJS + routesJS + `
return {get report() {
  probe("the result's getter");
  return {found, installs, nonString, prepCalls, limitCalls, prepare: typeof Error.prepareStackTrace,
    limit: typeof Error.stackTraceLimit, sources, graph};
}};`
	out, re, d := runJS(t, sharedRuntime(t), js, api.Limits{})
	require.Nil(t, re, "%+v", re)
	var got struct{ Report introspectionReport }
	require.NoError(t, json.Unmarshal(out.Result, &got))
	r := got.Report

	require.Empty(t, r.Found, "functions a program obtained")
	require.Zero(t, r.PrepCalls, "Error.prepareStackTrace was called")
	require.Zero(t, r.LimitCalls, "Error.stackTraceLimit's valueOf was called")
	require.Equal(t, "undefined", r.Prepare)
	require.Equal(t, "number", r.Limit)
	require.Empty(t, r.NonString, "stacks that are not strings")
	require.Equal(t, []string{"assign: ok", "define: TypeError", "setter: ok", "inherited: ok", "Reflect.set: ok",
		"stackTraceLimit: ok", "define on the tools proxy: TypeError", "set the tools proxy's prototype: TypeError"}, r.Installs)
	require.Empty(t, r.Sources, "prelude functions that show source")
	// The only functions named like the prelude's are the engine's own and
	// the globals the prelude installs on purpose.
	require.Equal(t, []string{
		"globalThis.Math.log (log)",
		"globalThis.Object.[[Prototype]].call (call)", // Function.prototype.call
		"globalThis.clearTimeout (clearTimeout)",
		"globalThis.setTimeout (setTimeout)",
		"globalThis.tools.$call (call)", // calls a bound tool by name (a tool named then)
		"globalThis.tools.fail (fail)",  // the test's tool
	}, r.Graph)

	// The dispatcher saw the two calls the program made with plain
	// arguments, the failing one and the last echo; no refused one.
	var seen []string
	for _, c := range d.seen() {
		seen = append(seen, c.Name+" "+string(c.Args))
	}
	require.Equal(t, []string{`echo {"a":1}`, `fail {"message":"failed"}`, `echo {}`}, seen)
}

// While the prelude describes a failure it reads the thrown value, running
// the program's getters: they find nothing either. They report through
// console.log, the one channel left once the program failed.
func TestIntrospection_nothingReachableWhileAFailureIsDescribed(t *testing.T) {
	tests := []struct {
		name, throw, message string
	}{
		{"uncaught exception", `throw bad;`, "Error: m"},
		{"unhandled rejection", `Promise.reject(bad); return 1;`, "unhandled promise rejection: Error: m"},
		{"exception in a timer callback", `setTimeout(() => { throw bad; }, 0); await new Promise((r) => setTimeout(r, 2000));`,
			"uncaught exception in a setTimeout callback: Error: m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js := "const internalNames = [];\n" + probeJS + `
const reportOnce = mine(function () {
  probe("describing a failure");
  console.log(JSON.stringify({found, prepCalls, limitCalls}));
  return "Error";
});
const bad = Object.create(Error.prototype, {
  name: {get: reportOnce},
  message: {get: hook("a failure's message", "m")},
  stack: {get: hook("a failure's stack", "")},
});
` + tt.throw
			_, re, _ := runJS(t, sharedRuntime(t), js, api.Limits{})
			require.NotNil(t, re)
			require.Equal(t, api.KindException, re.Kind, "%+v", re)
			require.Equal(t, tt.message, re.Message)
			require.NotEmpty(t, re.Logs, "the failure was not described")
			for _, l := range re.Logs {
				require.JSONEq(t, `{"found":[],"prepCalls":0,"limitCalls":0}`, l)
			}
		})
	}
}

// pollutionJS replaces, after the program started, every intrinsic the
// prelude uses or might use (and the descriptor and array fields it reads
// and writes) with functions that record that they ran and return garbage.
// It is the same length whether it pollutes or not, so that both runs have
// the same line and column numbers.
const pollutionJS = `
let hits = "";
const saved = {dp: Object.defineProperty, gopd: Object.getOwnPropertyDescriptor, keys: Object.keys, Promise, TypeError, Error, String};
const prepared = {map: new Map([[1, {a: 2}]]), set: new Set(["s"]), date: new Date(0), re: /r+e/gi, err: new TypeError("logged"),
  cycle: (() => { const c = {}; c.c = c; return c; })(), big: 1n, proxy: new Proxy({}, {}), bare: Object.create(null), fn: function named() {}, cls: class Cls {}};
if (POLLUTE) {
  const hit = (what) => { hits += what + ";"; };
  const evil = (what) => function () { hit(what); return "garbage"; };
  const define = (o, k, d) => { try { saved.dp(o, k, {__proto__: null, configurable: true, ...d}); } catch (e) { hit("could not pollute " + saved.String(k)); } };
  // Index loops: the program's own for...of would use the replaced iterator.
  const replace = (o, name, ks) => {
    for (let i = 0; i < ks.length; i++) define(o, ks[i], {value: evil(name + "." + saved.String(ks[i])), writable: true});
  };
  const accessor = (o, name, ks) => {
    for (let i = 0; i < ks.length; i++) {
      const what = name + "." + saved.String(ks[i]);
      define(o, ks[i], {get: evil(what + " get"), set: evil(what + " set")});
    }
  };
  // Descriptor fields, the fields of what the prelude creates, conversions.
  // (Not Object.prototype.then, nor the name, message and stack of
  // Error.prototype: the engine and the prelude read them from the
  // program's own values, as JavaScript says they must, for the program.)
  replace(Object.prototype, "Object.prototype", ["get", "set", "value", "writable", "enumerable", "configurable", "toJSON",
    "toString", "valueOf", "hasOwnProperty", Symbol.toPrimitive, Symbol.iterator]);
  accessor(Object.prototype, "Object.prototype", ["kind", "message", "stack", "line", "column", "callback", "args", "name", "toolName",
    "maxPendingCalls", "maxCalls", "maxTimers", "memoryBytes", "length", "0", "1"]);
  accessor(Array.prototype, "Array.prototype", ["0", "1", "2", "3", "4", "5"]);
  replace(Array.prototype, "Array.prototype", ["push", "pop", "slice", "splice", "map", "join", "indexOf", "includes", "concat", "forEach",
    "filter", "reduce", "keys", "values", "entries", "toString", Symbol.iterator]);
  accessor(Array, "Array", [Symbol.species]);
  replace(Array, "Array", ["isArray", "from", "of"]);
  replace(String.prototype, "String.prototype", ["slice", "indexOf", "split", "substring", "charAt", "charCodeAt", "replace", "concat",
    "toString", "valueOf", "toJSON", "trim", "startsWith", "includes", Symbol.split, Symbol.iterator]);
  replace(Number.prototype, "Number.prototype", ["toString", "valueOf", "toJSON", "toFixed"]);
  replace(BigInt.prototype, "BigInt.prototype", ["toString", "toJSON", "valueOf"]);
  replace(Symbol.prototype, "Symbol.prototype", ["toString", "valueOf"]);
  replace(Boolean.prototype, "Boolean.prototype", ["toString", "valueOf", "toJSON"]);
  replace(Function.prototype, "Function.prototype", ["call", "apply", "bind", "toString"]);
  replace(RegExp.prototype, "RegExp.prototype", ["exec", "test", "toString", Symbol.match, Symbol.replace, Symbol.split, Symbol.matchAll]);
  accessor(RegExp.prototype, "RegExp.prototype", ["source", "flags", "global", "lastIndex"]);
  replace(Date.prototype, "Date.prototype", ["getTime", "toISOString", "toJSON", "valueOf", "toString", Symbol.toPrimitive]);
  replace(Map.prototype, "Map.prototype", ["forEach", "entries", "get", "has", "set", Symbol.iterator]);
  accessor(Map.prototype, "Map.prototype", ["size"]);
  replace(Set.prototype, "Set.prototype", ["forEach", "values", "has", "add", Symbol.iterator]);
  accessor(Set.prototype, "Set.prototype", ["size"]);
  replace(Error.prototype, "Error.prototype", ["toString"]);
  replace(Error, "Error", ["captureStackTrace"]);
  replace(Promise.prototype, "Promise.prototype", ["then", "catch", "finally"]);
  replace(Promise, "Promise", ["resolve", "reject", "all", "race", "withResolvers"]);
  accessor(Promise, "Promise", [Symbol.species]);
  replace(Object, "Object", ["create", "freeze", "getPrototypeOf", "setPrototypeOf", "keys", "getOwnPropertyDescriptor",
    "getOwnPropertyNames", "hasOwn", "is", "assign", "entries", "fromEntries", "defineProperties"]);
  replace(Reflect, "Reflect", ["apply", "get", "set", "construct", "ownKeys", "defineProperty", "getPrototypeOf", "has"]);
  replace(JSON, "JSON", ["stringify", "parse"]);
  replace(Math, "Math", ["floor", "min", "max", "trunc", "abs"]);
  Error.stackTraceLimit = {valueOf: evil("Error.stackTraceLimit valueOf")};
  Error.prepareStackTrace = evil("Error.prepareStackTrace");
  replace(globalThis, "globalThis", ["String", "Number", "Array", "Promise", "Proxy", "Error", "TypeError", "RangeError", "RegExp",
    "Date", "Map", "Set", "Symbol", "JSON", "Reflect", "Boolean", "BigInt"]);
  replace(Object, "Object", ["defineProperty"]);
}
`

// useJS uses every part of the prelude a program can reach, and reports
// what it saw through saved intrinsics that were captured before the
// pollution (a program breaks its own code; the test cares about the
// prelude's).
const useJS = `
const seen = {__proto__: null};
let n = 0;
const put = (v) => { saved.dp(seen, "r" + n++, {__proto__: null, value: v, enumerable: true}); };
const r1 = await tools.echo({a: [1, "x", null, true, {b: -0}], u: undefined, nested: {deep: [[[]]]}});
put(r1);
try { await tools.fail({message: "it failed"}); } catch (e) {
  put([e instanceof ToolCallError, e instanceof saved.Error, e.name, e.message, e.toolName, saved.gopd(e, "toolName").writable,
    saved.gopd(e, "toolName").enumerable, typeof e.stack]);
}
const refused = [{f: prepared.fn}, {b: prepared.big}, prepared.cycle, {d: prepared.date}, {m: prepared.map},
  {p: prepared.proxy}, {n: 0 / 0}, {u: [undefined]}, {c: new prepared.cls()}, [1, [2, [prepared.fn]]]];
for (let i = 0; i < refused.length; i++) {
  try { await tools.echo(refused[i]); put("sent"); } catch (e) { put([e instanceof saved.TypeError, e.message]); }
}
try { tools.nope; } catch (e) { put(e.message); }
try { tools.run_code; } catch (e) { put(e.message); }
try { tools.other = 1; } catch (e) { put(e.message); }
put([typeof tools.then, "echo" in tools, "nope" in tools, saved.keys(tools).length]);
console.log("text", 1, -0, prepared.big, undefined, null, true, [1, [2, [3, [4, [5, [6]]]]]],
  {a: 1, "b-c": 2, get g() { return 1; }, set s(v) {}, get gs() { return 1; }, set gs(v) {}},
  prepared.date, prepared.map, prepared.set, prepared.re, prepared.fn, prepared.cls, new prepared.cls(), prepared.cycle,
  prepared.bare, "x".repeat(1200));
console.log(prepared.err);
console.error("an error line");
const timers = await new saved.Promise((resolve) => {
  const cleared = setTimeout(() => resolve("the cleared timer fired"), 0);
  clearTimeout(cleared);
  setTimeout((a, b) => resolve([a, b]), 1, "a", "b");
});
put(timers);
try { setTimeout(1); } catch (e) { put([e instanceof saved.TypeError, e.message]); }
put(new ToolCallError("made", "by the program").toolName);
put(hits);
return {seen, later: undefined};
`

// TestIntrospection_pollutionChangesNothingThePreludeDoes runs one program
// twice, with and without replacing every intrinsic after it started: the
// prelude's behaviour (what the tools receive, what the program gets back,
// the logs, the result) is the same, and none of the replacements ran.
func TestIntrospection_pollutionChangesNothingThePreludeDoes(t *testing.T) {
	run := func(pollute bool) (wasmhost.Outcome, []string) {
		flag := "false"
		if pollute {
			flag = "true "
		}
		js := strings.Replace(pollutionJS, "POLLUTE", flag, 1) + useJS
		out, re, d := runJS(t, sharedRuntime(t), js, api.Limits{})
		require.Nil(t, re, "polluted: %v: %+v", pollute, re)
		var calls []string
		for _, c := range d.seen() {
			calls = append(calls, c.Name+" "+string(c.Args))
		}
		return out, calls
	}
	clean, cleanCalls := run(false)
	polluted, pollutedCalls := run(true)

	var result struct {
		Seen map[string]json.RawMessage
	}
	require.NoError(t, json.Unmarshal(polluted.Result, &result))
	hits := result.Seen["r"+jsonCount(result.Seen)]
	require.JSONEq(t, `""`, string(hits), "replaced intrinsics that ran")

	require.Equal(t, cleanCalls, pollutedCalls)
	require.Equal(t, []string{`echo {"a":[1,"x",null,true,{"b":0}],"nested":{"deep":[[[]]]}}`, `fail {"message":"it failed"}`},
		pollutedCalls, "only plain arguments reach the host")
	require.Equal(t, clean.Logs, polluted.Logs)
	require.JSONEq(t, string(clean.Result), string(polluted.Result))

	// What the clean run saw is right, so both are.
	var cleanResult struct{ Seen map[string]json.RawMessage }
	require.NoError(t, json.Unmarshal(clean.Result, &cleanResult))
	want := []string{
		`{"a":[1,"x",null,true,{"b":0}],"nested":{"deep":[[[]]]}}`,
		`[true,true,"ToolCallError","it failed","fail",false,true,"string"]`,
		`[true,"tools.echo: the arguments are not plain JSON: args.f is a function"]`,
		`[true,"tools.echo: the arguments are not plain JSON: args.b is a BigInt (1n); convert it to a number or a string"]`,
		`[true,"tools.echo: the arguments are not plain JSON: args.c is a circular reference to one of its parents"]`,
		`[true,"tools.echo: the arguments are not plain JSON: args.d is a Date (convert it with toISOString())"]`,
		`[true,"tools.echo: the arguments are not plain JSON: args.m is a Map (convert it with Object.fromEntries())"]`,
		`[true,"tools.echo: the arguments are not plain JSON: args.p is a Proxy; pass a plain copy of it"]`,
		`[true,"tools.echo: the arguments are not plain JSON: args.n is NaN, which JSON cannot represent"]`,
		`[true,"tools.echo: the arguments are not plain JSON: args.u[0] is undefined, which JSON cannot represent (leave it out or use null)"]`,
		`[true,"tools.echo: the arguments are not plain JSON: args.c is an instance of Cls, not a plain object or array"]`,
		`[true,"tools.echo: the arguments are not plain JSON: args[1][1][0] is a function"]`,
		`"tools.nope is not a bound tool; the bound tools are: echo, slow, fail, failLater, hang"`,
		`"tools.run_code is not available: run_code cannot be called from inside a program"`,
		`"tools is read-only"`,
		`["undefined",true,false,5]`,
		`["a","b"]`,
		`[true,"setTimeout: the callback must be a function"]`,
		`"by the program"`,
		`""`,
	}
	require.Len(t, cleanResult.Seen, len(want))
	for i, w := range want {
		require.JSONEq(t, w, string(cleanResult.Seen["r"+itoa(i)]), "seen[%d]", i)
	}
	require.Len(t, clean.Logs, 3)
	require.Equal(t, `text 1 -0 1n undefined null true [1, [2, [3, [4, [Array]]]]] {a: 1, "b-c": 2, g: [Getter], s: [Setter], gs: [Getter/Setter]} `+
		`1970-01-01T00:00:00.000Z Map(1) {1 => {a: 2}} Set(1) {"s"} /r+e/gi [Function: named] [Function: Cls] Cls {} {c: [Circular]} {} `+
		strings.Repeat("x", 1200), clean.Logs[0])
	require.True(t, strings.HasPrefix(clean.Logs[1], "TypeError: logged\n    at <anonymous> (<program>:"), clean.Logs[1])
	require.Equal(t, "[error] an error line", clean.Logs[2])
}

func jsonCount(m map[string]json.RawMessage) string { return itoa(len(m) - 1) }

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// A program cannot make its run end as a trap (the class of a broken guest
// or host): whatever it does to the prelude's inputs, it ends with its own
// failure or its result.
func TestIntrospection_programsCannotForceATrap(t *testing.T) {
	tests := []struct {
		name, js string
		kind     api.Kind // "" for success
		message  string   // a substring of the message, or of the result
	}{
		{"a result whose getter throws", `return {get x() { throw new Error("no") }}`,
			api.KindInvalidOutput, "result.x could not be read (Error: no)"},
		{"a result whose getter throws an unreadable value",
			`return {get x() { throw {get name() { throw 1 }, get message() { throw 2 }, __proto__: Error.prototype} }}`,
			api.KindInvalidOutput, "result.x could not be read (an unreadable error)"},
		{"a result whose getter calls tools", `return {get x() { tools.echo({}); setTimeout(() => {}, 0); console.log("late"); return 1 }}`,
			"", `{"x":1}`},
		{"a result whose getter recurses", `function f() { return f() } return {get x() { return f() }}`,
			api.KindInvalidOutput, "result.x could not be read (RangeError: Maximum call stack size exceeded)"},
		{"a thrown error whose getters throw", `throw {__proto__: Error.prototype, get name() { throw 1 }, get message() { throw 2 }}`,
			api.KindException, "Error: "},
		{"a thrown object whose conversion throws", `throw {[Symbol.toPrimitive]() { throw 1 }, toString() { throw 2 }}`,
			api.KindException, "the program threw a value that is not an Error"},
		{"a thrown proxy", `throw new Proxy({}, {getPrototypeOf() { throw 1 }, ownKeys() { throw 2 }, get() { throw 3 }})`,
			api.KindException, "the program threw a value that is not an Error"},
		{"a thrown array with an index getter on Array.prototype",
			`Object.defineProperty(Array.prototype, "0", {get() { throw 1 }, set(v) { throw 2 }}); throw [, 1]`,
			api.KindException, "the program threw a value that is not an Error: ["},
		{"recursion into the prelude at the stack limit",
			`function f(n) { try { return f(n + 1) } catch (e) { console.log({a: [n]}); return tools.echo({n}) } } await f(0); return 1`,
			"", "1"},
		{"deep arguments at the stack limit",
			`let deep = []; for (let i = 0; i < 97; i++) deep = [deep];
function f() { try { return f() } catch (e) { return tools.echo({deep}) } } await f(); return 2`, "", "2"},
		{"the wrapper escaped", `}}); tools.echo({}); (function(){return function(){`, "", ""},
		{"the wrapper escaped to a non-function", `}}); (1 + function(){return function(){`, api.KindException, "not a function"},
		{"the wrapper's outer function returns a non-function", `}}); (function(){return 1; function g(){`, api.KindException, "not a function"},
		{"ToolCallError with a hostile name", `throw new ToolCallError("m", {toString() { throw new Error("name") }})`,
			api.KindException, "Error: name"},
		{"prepareStackTrace that throws", `Error.prepareStackTrace = () => { throw 1 }; throw new Error("e")`,
			api.KindException, "Error: e"},
		{"a result getter that pollutes", `return {get x() { Object.prototype.toJSON = () => 1; Array.prototype.push = null; return [1] }}`,
			"", `{"x":[1]}`},
		{"a getter on Object.prototype for the report's fields",
			`for (const k of ["kind", "message", "stack"]) Object.defineProperty(Object.prototype, k, {set() { throw 1 }}); throw new Error("e")`,
			api.KindException, "Error: e"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, re, _ := runJS(t, sharedRuntime(t), tt.js, api.Limits{WallTime: 10 * time.Second})
			if tt.kind == "" {
				require.Nil(t, re, "%+v", re)
				if tt.message == "" {
					require.Nil(t, out.Result)
				} else {
					require.JSONEq(t, tt.message, string(out.Result))
				}
				return
			}
			require.NotNil(t, re)
			require.Equal(t, tt.kind, re.Kind, "%+v", re)
			require.Contains(t, re.Message, tt.message)
		})
	}
}

func TestIntrospection_internalNames(t *testing.T) {
	names := internalNames(t)
	sort.Strings(names)
	for _, n := range []string{"toolRefused", "makeTools", "tools", "render", "fail", "finish", "encode", "call", "report"} {
		require.Contains(t, names, n)
	}
}
