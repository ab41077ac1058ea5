package wasmhost_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// The guest parses a call's result on a fast path (guest/glue/calls.c)
// that gives up, for JS_ParseJSON, on what it does not handle; these check
// that the program sees exactly what JSON.parse of the same text gives,
// on either path.

// sameAsParse is a program that compares the result of tools.value with
// JSON.parse of the text tools.text returns: "same", or what differs.
const sameAsParse = `
const a = await tools.value(), b = JSON.parse(await tools.text());
function same(x, y, path) {
  if (typeof x !== typeof y) return path + ": " + typeof x + " vs " + typeof y;
  if (x === null || typeof x !== "object") return Object.is(x, y) ? "" : path + ": " + String(x) + " vs " + String(y);
  if (Array.isArray(x) !== Array.isArray(y) || Object.getPrototypeOf(x) !== Object.getPrototypeOf(y)) return path + ": not the same kind";
  const kx = Reflect.ownKeys(x), ky = Reflect.ownKeys(y);
  if (kx.join("\u0000") !== ky.join("\u0000")) return path + ": keys " + kx.join() + " vs " + ky.join();
  for (const k of kx) {
    const dx = Object.getOwnPropertyDescriptor(x, k), dy = Object.getOwnPropertyDescriptor(y, k);
    if (dx.writable !== dy.writable || dx.enumerable !== dy.enumerable || dx.configurable !== dy.configurable) return path + "." + k + ": attributes";
    const d = same(dx.value, dy.value, path + "." + k);
    if (d) return d;
  }
  return "";
}
return same(a, b, "result") || "same"`

// parsedTools answers tools.value with text as the call's value and
// tools.text with text as a JSON string.
func parsedTools(text []byte) wasmhost.Dispatcher {
	return wasmhost.DispatcherFunc(func(name string, _ json.RawMessage, done func(wasmhost.CallResult)) {
		if name == "value" {
			done(wasmhost.CallResult{OK: true, Value: text})
			return
		}
		s, _ := json.Marshal(string(text))
		done(wasmhost.CallResult{OK: true, Value: s})
	})
}

func runSameAsParse(t testing.TB, rt *wasmhost.Runtime, text []byte) string {
	out, err := rt.Run(context.Background(), wasmhost.Program{JS: sameAsParse, Tools: []string{"value", "text"},
		Limits: api.Limits{OutputBytes: 1 << 20}}, parsedTools(text))
	require.NoError(t, err)
	var got string
	require.NoError(t, json.Unmarshal(out.Result, &got), "%s", out.Result)
	return got
}

func TestRuntime_Run_resultsParseAsJSONParse(t *testing.T) {
	rt := sharedRuntime(t)
	tests := []struct{ name, text string }{
		{"small object", `{"i":5}`},
		{"empty object and array", `{"a":{},"b":[]}`},
		{"whitespace", " \t\n\r{ \"a\" :\t[ 1 , 2 ]\n}\r\n "},
		{"integers at the int32 bounds", `[2147483647,-2147483648,0,-1]`},
		{"integers past the int32 bounds", `[2147483648,-2147483649,99999999999999999999]`},
		{"minus zero", `[-0, 0]`},
		{"fractions and exponents", `[1.5,1e3,-2E-2,0.1]`},
		{"literals", `[true,false,null]`},
		{"strings", `["","a b","x\"y","\\","\u00e9","é","\ud83d\ude00","\ud800"]`},
		{"control characters escaped", `"a\nb\tc\u0001"`},
		{"a duplicate key", `{"a":1,"b":2,"a":3}`},
		{"integer keys", `{"b":1,"2":2,"1":3,"a":4,"4294967295":5}`},
		{"__proto__ as a key", `{"__proto__":{"x":1},"y":2}`},
		{"non-ASCII keys", `{"é":1,"\u0041":2}`},
		{"nested past the fast depth", `[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`},
		{"nested at the fast depth", `[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`},
		{"a scalar", `42`},
		{"a string scalar", `"hello"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, "same", runSameAsParse(t, rt, []byte(tt.text)))
		})
	}
}

// A result that is not JSON (the host's Dispatcher is trusted to send
// JSON, but a broken one must not break the guest) rejects the call, on
// either path.
func TestRuntime_Run_resultNotJSON(t *testing.T) {
	rt := sharedRuntime(t)
	for _, text := range []string{`{"a":1`, `[1,]`, `{"a" 1}`, `tru`, `1 2`, `{"a":1}x`, `"abc`, `[01]`, `-`, `{"a":1,}`} {
		t.Run(text, func(t *testing.T) {
			out, err := rt.Run(context.Background(), wasmhost.Program{
				JS:    `try { await tools.value(); return "resolved" } catch (e) { return e.name + ": " + e.message }`,
				Tools: []string{"value"}}, parsedTools([]byte(text)))
			require.NoError(t, err)
			require.JSONEq(t, strconv.Quote("ToolCallError: the tool returned a value that is not valid JSON"), string(out.Result))
		})
	}
}

func FuzzRuntime_Run_resultsParseAsJSONParse(f *testing.F) {
	for _, s := range []string{`{"i":5}`, `[1,"a",{"b":null}]`, `{"a":-0}`, `[1.5e3]`, `{"1":1,"a":[true,false]}`, `"\u00e9"`} {
		f.Add([]byte(s))
	}
	rt := sharedRuntime(f)
	f.Fuzz(func(t *testing.T, text []byte) {
		if !json.Valid(text) || !utf8.Valid(text) || len(text) > 4096 {
			return // JS_ParseJSON refuses invalid UTF-8, which tools.text would replace
		}
		require.Equal(t, "same", runSameAsParse(t, rt, text), "%s", text)
	})
}

// A getter of a tool's arguments may call a tool itself: the inner call's
// arguments are encoded apart from the outer's, which are not disturbed.
func TestRuntime_Run_callFromAnArgumentsGetter(t *testing.T) {
	out, re, d := runJS(t, sharedRuntime(t), `
const inner = [];
const args = {a: 1, get b() { inner.push(tools.echo({c: "inner", d: [1, 2]})); return "outer" }, e: [3]};
const r = await tools.echo(args);
return [r, await inner[0]]`, api.Limits{})
	require.Nil(t, re, "%+v", re)
	require.JSONEq(t, `[{"a":1,"b":"outer","e":[3]},{"c":"inner","d":[1,2]}]`, string(out.Result))
	require.Len(t, d.seen(), 2)
}

// A call's promise is settled by the glue without resolving functions
// (guest/glue/promise.inc), as they would settle it: a result that is a
// thenable is followed, a then getter that throws rejects the call, a
// failure rejects without looking for a then, and a rejection nobody
// handles fails the run.
func TestRuntime_Run_callSettlement(t *testing.T) {
	tests := []struct {
		name, js string
		kind     api.Kind
		want     string // the result's JSON, or a part of the error's message
	}{
		{"a result that is a thenable is followed",
			`Object.prototype.then = function (resolve) { delete Object.prototype.then; resolve("followed") }; return await tools.echo({a: 1})`,
			"", `"followed"`},
		{"a then getter that throws rejects the call",
			`Object.defineProperty(Object.prototype, "then", {get() { throw new Error("no then") }, configurable: true});
try { await tools.echo({a: 1}); return "resolved" } catch (e) { delete Object.prototype.then; return e.message }`,
			"", `"no then"`},
		{"a failure is not followed",
			`Object.prototype.then = function (resolve) { resolve("followed") };
try { await tools.fail({message: "m"}); return "resolved" } catch (e) { delete Object.prototype.then; return [e.name, e.message, e.toolName, e.code] }`,
			"", `["ToolCallError", "m", "fail", "TOOL_FAILED"]`},
		{"a result that is not an object", `return await tools.echo({}) !== null`, "", `true`},
		{"an unhandled failure fails the run", `tools.fail({message: "lost"}); await tools.echo({}); return 1`,
			api.KindException, "unhandled promise rejection: ToolCallError: lost"},
		{"a failure handled later is fine", `const p = tools.fail({message: "late"}); await tools.echo({}); try { await p } catch (e) { return e.message }`,
			"", `"late"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, re, _ := runJS(t, sharedRuntime(t), tt.js, api.Limits{})
			if tt.kind != "" {
				require.NotNil(t, re)
				require.Equal(t, tt.kind, re.Kind, "%+v", re)
				require.Contains(t, re.Message, tt.want)
				return
			}
			require.Nil(t, re, "%+v", re)
			require.JSONEq(t, tt.want, string(out.Result))
		})
	}
}
