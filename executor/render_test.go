package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// nestedZeros is n zeros in an array nested depth arrays deep.
func nestedZeros(depth, n int) json.RawMessage {
	return json.RawMessage(strings.Repeat("[", depth) + strings.TrimSuffix(strings.Repeat("0,", n), ",") + strings.Repeat("]", depth))
}

// deepMiB is a value of at most 1 MiB, nested 99 deep, whose indented text
// is about 104 MB.
var deepMiB = nestedZeros(99, (api.DefaultOutputBytes-2*99)/2)

// allocated returns the bytes allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A result that fits the hard cap as JSON but whose indented text is 104 MB
// succeeds: the model is shown at most the model budget of it, cut
// structurally, and the host allocates a few times the cap, not the 104 MB.
func TestRunCode_modelBudget_deepResultCostsTheCap(t *testing.T) {
	const limit = api.DefaultOutputBytes
	require.LessOrEqual(t, len(deepMiB), limit)
	rt := fakeRuntime(func(context.Context, wasmhost.Program, wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		return wasmhost.Outcome{Logs: []string{"building"}, Result: deepMiB}, nil
	})
	var notes []executor.Notification
	e := newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(rt).
		WithOnResult(func(n executor.Notification) { notes = append(notes, n) }))
	var r api.Result
	bytes := allocated(func() {
		r = e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("return deep")})
	})
	require.Less(t, bytes, uint64(16*limit), "bytes allocated by the host")

	require.True(t, r.OK(), r.Text)
	require.LessOrEqual(t, len(r.Text), api.DefaultModelBytes)
	require.True(t, strings.HasPrefix(r.Text, "building\nResult:\n[\n  [\n    ["), r.Text[:100])
	require.Contains(t, r.Text, "[output cut to the model budget of 24576 bytes")
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	require.Equal(t, string(deepMiB), string(v.Result), "the host has the whole value")
	require.Len(t, notes, 1)
}

// The model budget is reached exactly: a text of the budget's size is
// whole, one byte more is cut to within the budget, whether the excess is
// in the logs or the result; the value is whole either way.
func TestRunCode_modelBudget_atAndPastTheBudget(t *testing.T) {
	logs := []string{"log", strings.Repeat("l", 600)}
	value := json.RawMessage(`{"a":"` + strings.Repeat("x", 600) + `"}`)
	whole := strings.Join(logs, "\n") + "\nResult:\n{\n  \"a\": \"" + strings.Repeat("x", 600) + "\"\n}"
	for _, tt := range []struct {
		name   string
		budget int
		cut    bool
	}{
		{"above", len(whole) + 1, false},
		{"at", len(whole), false},
		{"below", len(whole) - 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rt := fakeRuntime(func(context.Context, wasmhost.Program, wasmhost.Dispatcher) (wasmhost.Outcome, error) {
				return wasmhost.Outcome{Logs: logs, Result: value}, nil
			})
			e := newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(rt).WithLimits(api.Limits{ModelBytes: tt.budget}))
			r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("return v")})
			require.True(t, r.OK(), r.Text)
			require.LessOrEqual(t, len(r.Text), tt.budget)
			if !tt.cut {
				require.Equal(t, whole, r.Text)
			} else {
				require.Contains(t, r.Text, "[output cut to the model budget")
			}
			require.JSONEq(t, `{"logs":`+mustJSON(t, logs)+`,"result":`+string(value)+`}`, string(r.Value))
		})
	}
}

// A caller lowers the model budget with limits.model_bytes, never below
// api.MinModelBytes (the schema refuses it) and never above the
// deployment's (it is lowered).
func TestRunCode_modelBudget_callerLimit(t *testing.T) {
	value := json.RawMessage(`"` + strings.Repeat("x", 30_000) + `"`)
	rt := fakeRuntime(func(context.Context, wasmhost.Program, wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		return wasmhost.Outcome{Result: value}, nil
	})
	e := newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(rt))
	run := func(budget int) api.Result {
		args, _ := json.Marshal(map[string]any{"code": "return v", "limits": map[string]any{"model_bytes": budget}})
		return e.Execute(context.Background(), executor.Call{Name: "run_code", Args: args})
	}
	for _, tt := range []struct {
		budget, most int
	}{
		{api.MinModelBytes, api.MinModelBytes},
		{4096, 4096},
		{1 << 30, api.DefaultModelBytes},
	} {
		r := run(tt.budget)
		require.True(t, r.OK(), r.Text)
		require.LessOrEqual(t, len(r.Text), tt.most, "model_bytes %d", tt.budget)
		require.Greater(t, len(r.Text), tt.most/2, "model_bytes %d", tt.budget)
	}
	r := run(api.MinModelBytes - 1)
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeInvalidArgs, r.Err.Code, r.Text)
	require.Contains(t, r.Text, "/limits/model_bytes")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// resultPart is the result's text in a run's text: after the label when
// there are logs, before the closing line when it was cut.
func resultPart(t *testing.T, text string, hasLogs bool) string {
	t.Helper()
	if hasLogs {
		i := strings.Index(text, "\nResult:\n")
		require.GreaterOrEqual(t, i, 0, "the result label is there: %.200s", text)
		text = text[i+len("\nResult:\n"):]
	}
	if i := strings.LastIndex(text, "\n[output cut to the model budget"); i >= 0 {
		text = text[:i]
	}
	return text
}

// What the issue asks to see, through the real guest: a very long string,
// a 100,000-item array, a 200-deep object and 50,000 log lines each
// succeed, the text within the budget with valid JSON and a marker, the
// value whole (the hard cap is the default 4 MiB).
func TestSandbox_modelBudget_largeOutputsSucceed(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	for _, tt := range []struct {
		name, code string
		json, logs bool
		marker     string
		check      func(t *testing.T, v executor.RunCodeValue)
	}{
		{"a 2 MB string", `return {s: "ab".repeat(1_000_000)}`, true, false, "more bytes)", func(t *testing.T, v executor.RunCodeValue) {
			var got struct{ S string }
			require.NoError(t, json.Unmarshal(v.Result, &got))
			require.Len(t, got.S, 2_000_000)
		}},
		{"a 100,000-item array", `return Array.from({length: 100_000}, (_, i) => i)`, true, false, "more items", func(t *testing.T, v executor.RunCodeValue) {
			var got []int
			require.NoError(t, json.Unmarshal(v.Result, &got))
			require.Len(t, got, 100_000)
			require.Equal(t, 99_999, got[99_999])
		}},
		{"a 200-deep object", `let v: any = {leaf: 1}; for (let i = 0; i < 199; i++) v = {a: v}; return v`, true, false, "… an object of 1 key", func(t *testing.T, v executor.RunCodeValue) {
			require.Equal(t, 200, strings.Count(string(v.Result), "{"))
			require.True(t, json.Valid(v.Result))
		}},
		{"50,000 log lines", `for (let i = 0; i < 50_000; i++) console.log("line " + i); return {done: true}`, true, true, "log lines cut", func(t *testing.T, v executor.RunCodeValue) {
			require.Len(t, v.Logs, 50_000)
			require.Equal(t, "line 49999", v.Logs[49_999])
			require.JSONEq(t, `{"done":true}`, string(v.Result))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runProgram(e, tt.code)
			require.True(t, r.OK(), r.Text)
			require.LessOrEqual(t, len(r.Text), api.DefaultModelBytes)
			require.Contains(t, r.Text, tt.marker)
			require.Contains(t, r.Text, "[output cut to the model budget of 24576 bytes")
			require.Contains(t, r.Text, "return a summary or a slice")
			part := resultPart(t, r.Text, tt.logs)
			require.True(t, json.Valid([]byte(part)), "valid JSON: %.300s", part)
			var v executor.RunCodeValue
			require.NoError(t, json.Unmarshal(r.Value, &v))
			tt.check(t, v)
		})
	}
}

// A tool's value rendered as text, for the model (a direct call) or for a
// result listener (a nested call), is indented only within the output
// limit: past it, it is shown as the value, unindented.
func TestExecutor_finish_textOfADeepValueIsBounded(t *testing.T) {
	deep := func(context.Context, api.Input) (api.Output, error) {
		return api.Output{Value: deepMiB}, nil
	}
	small := func(context.Context, api.Input) (api.Output, error) {
		return api.Output{Value: json.RawMessage(`{"a":1}`)}, nil
	}
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModeBoth))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "deep", Body: deep}))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "small", Body: small}))
	rt := fakeRuntime(func(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		if r := await(t, submit(d, "deep", `{}`)); !r.OK {
			return wasmhost.Outcome{}, fmt.Errorf("nested call failed: %s", r.Message)
		}
		return wasmhost.Outcome{Result: json.RawMessage(`1`)}, nil
	})
	texts := map[string]string{}
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(rt).
		WithOnResult(func(n executor.Notification) { texts[n.Tool] = n.Result.Text }))

	var direct api.Result
	bytes := allocated(func() { direct = e.Execute(context.Background(), executor.Call{Name: "deep"}) })
	require.True(t, direct.OK(), direct.Text)
	require.Equal(t, string(deepMiB), direct.Text)
	require.Less(t, bytes, uint64(16*api.DefaultOutputBytes))

	r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("await tools.deep()")})
	require.True(t, r.OK(), r.Text)
	require.Equal(t, string(deepMiB), texts["deep"], "the nested call's text, for the listener")

	r = e.Execute(context.Background(), executor.Call{Name: "small"})
	require.Equal(t, "{\n  \"a\": 1\n}", r.Text, "a value within the limit is indented")
}

// A result that is not plain JSON is made JSON as JSON.stringify would, with
// Map, Set and Date as a model means them; each lossy conversion is noted
// once, in one log line.
func TestSandbox_result_asJSONStringifyWould(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	for _, tt := range []struct {
		name, code, want string
		notes            []string
	}{
		{"toJSON", `return {a: {toJSON: () => "A"}, b: 1}`, `{"a":"A","b":1}`, nil},
		{"NaN and Infinity", `return {x: NaN, y: [Infinity, 1]}`, `{"x":null,"y":[null,1]}`, []string{"NaN became null (first at result.x)", "Infinity became null (first at result.y[0])"}},
		{"undefined and functions", `return {a: undefined, f() {}, l: [undefined, () => 1]}`, `{"l":[null,null]}`, []string{"undefined was left out (first at result.a)", "a function was left out (first at result.f)", "undefined became null (first at result.l[0])", "a function became null (first at result.l[1])"}},
		{"Map of strings", `return {m: new Map([["a", 1], ["b", new Set([1, 2])]])}`, `{"m":{"a":1,"b":[1,2]}}`, []string{"a Map became an object (first at result.m)", "a Set became an array (first at result.m.b)"}},
		{"Map of numbers", `return new Map([[1, "one"]])`, `[[1,"one"]]`, []string{"a Map with keys that are not strings became an array of [key, value] entries (first at result)"}},
		{"Date", `return {when: new Date(0)}`, `{"when":"1970-01-01T00:00:00.000Z"}`, []string{"a Date became its ISO string (first at result.when)"}},
		{"class instance", `class P { x = 1; y = 2 }; return [new P()]`, `[{"x":1,"y":2}]`, nil},
		{"Error", `return {e: new TypeError("bad")}`, `{"e":{"name":"TypeError","message":"bad"}}`, []string{"an Error became its name and message (first at result.e)"}},
		{"noted once", `return [NaN, NaN, NaN]`, `[null,null,null]`, []string{"NaN became null (first at result[0])"}},
		{"a function is no result", `return () => 1`, ``, []string{"a function was left out (first at result)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runProgram(e, tt.code)
			require.True(t, r.OK(), r.Text)
			var v executor.RunCodeValue
			require.NoError(t, json.Unmarshal(r.Value, &v))
			if tt.want == "" {
				require.Empty(t, v.Result)
			} else {
				require.JSONEq(t, tt.want, string(v.Result))
			}
			if len(tt.notes) == 0 {
				require.Empty(t, v.Logs)
				return
			}
			require.Len(t, v.Logs, 1)
			require.True(t, strings.HasPrefix(v.Logs[0], "[ptcx] the result was converted to JSON: "), v.Logs[0])
			for _, n := range tt.notes {
				require.Contains(t, v.Logs[0], n)
				require.Equal(t, 1, strings.Count(r.Text, n), "noted once")
			}
		})
	}
}

// Only a value that cannot be JSON fails: a cycle or a BigInt, named by its
// path, however deep and whatever conversions are on the way.
func TestSandbox_result_cyclesAndBigIntsFailNamingThePath(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	for _, tt := range []struct{ code, want string }{
		{`const a: any = {b: [1, 2, 3, {}]}; a.b[3].c = a; return a`, "result.b[3].c is a circular reference"},
		{`return {a: [1, 2, 3, {b: 5n}]}`, "result.a[3].b is a BigInt (5n)"},
		{`return {m: new Map([["k", {b: 7n}]])}`, "result.m.k.b is a BigInt (7n)"},
		{`let v: any = {}; const root = v; for (let i = 0; i < 150; i++) v = v.a = {}; v.loop = root; return root`, "is a circular reference"},
		{`let v: any = 1; for (let i = 0; i < 201; i++) v = {a: v}; return v`, "is nested more than 200 levels deep"},
	} {
		r := runProgram(e, tt.code)
		require.NotNil(t, r.Err, tt.code)
		require.Equal(t, api.KindInvalidOutput, r.Err.Kind, r.Text)
		require.Contains(t, r.Text, tt.want)
	}
}

// A failed nested call rejects with a ToolCallError whose code is the
// call's error code, so a program can branch on it.
func TestSandbox_toolCallError_code(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	r := runProgram(e, `
		const codes: string[] = [];
		for (const f of [() => tools.broken(), () => tools.score({} as any), () => tools.write({path: 1} as any)]) {
			try { await f(); } catch (e) { codes.push(e instanceof ToolCallError ? e.code : "not a ToolCallError"); }
		}
		return codes`)
	require.True(t, r.OK(), r.Text)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	require.JSONEq(t, `["TOOL_FAILED","INVALID_ARGS","INVALID_ARGS"]`, string(v.Result))
	r = runProgram(e, `return new ToolCallError("m", "t").code`)
	require.Equal(t, "TOOL_FAILED", r.Text, "a program's own ToolCallError")
}

// A failure after side effects names the calls made before it, and the
// result carries the ledger with the run's stats, failed or not.
func TestSandbox_ledger_failureNamesTheCallsMade(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	r := runProgram(e, `
		await tools.write({path: "notes.txt", content: "x"});
		try { await tools.broken(); } catch {}
		await tools.score({id: 2});
		throw new Error("then it failed")`)
	require.NotNil(t, r.Err)
	require.Contains(t, r.Text, "Error: then it failed")
	require.Contains(t, r.Text, "Calls made before the failure: write(notes.txt) ok, broken() TOOL_FAILED, score() ok")
	require.NotNil(t, r.Ledger)
	require.Same(t, r.Err.Ledger, r.Ledger)
	require.Len(t, r.Ledger.Calls, 3)
	require.Equal(t, api.LedgerCall{Tool: "write", Args: "notes.txt", DurationMS: r.Ledger.Calls[0].DurationMS}, r.Ledger.Calls[0])
	require.Equal(t, api.CodeToolFailed, r.Ledger.Calls[1].Code)
	require.GreaterOrEqual(t, r.Ledger.Calls[2].DurationMS, 30.0, "score sleeps 30 ms")
	require.Equal(t, 3, r.Ledger.Stats.Calls)
	require.Greater(t, r.Ledger.Stats.WallMS, 30.0)

	r = runProgram(e, `throw new Error("at once")`)
	require.Contains(t, r.Text, "No nested calls were made before the failure.")

	ok := runProgram(e, `await tools.score({id: 1}); return 1`)
	require.True(t, ok.OK(), ok.Text)
	require.NotNil(t, ok.Ledger)
	require.Len(t, ok.Ledger.Calls, 1)
	require.Equal(t, "score", ok.Ledger.Calls[0].Tool)
	require.Equal(t, 1, ok.Ledger.Stats.Calls)
	require.Greater(t, ok.Ledger.Stats.ComputeMS, 0.0)
	require.Greater(t, ok.Ledger.Stats.MemoryBytes, int64(0))
	require.NotContains(t, ok.Text, "Calls made", "a success's text is its output")
}

// A failed run's stats say what it used up to its failure: the compute
// time it ran and its guest's memory, whatever stopped it.
func TestSandbox_ledger_failedRunStats(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	for _, tt := range []struct {
		name, code, limits string
		kind               api.Kind
		minComputeMS       float64
		minMemory          int64
	}{
		{"its compute limit", `while (true) {}`, `{"timeout_ms": 200}`, api.KindTimeout, 200, 1},
		{"its memory limit", `const a = []; while (true) a.push("x".repeat(1000) + a.length)`, `{"memory_mb": 8}`, api.KindMemory, 0.001, 4 << 20},
		{"microtasks past its memory limit", `const spin = () => Promise.resolve().then(() => spin()); spin(); await new Promise(() => {})`,
			`{"memory_mb": 8}`, api.KindMemory, 0.001, 4 << 20},
		{"an exception after work", `let s = 0; for (let i = 0; i < 1e6; i++) s += i; throw new Error(String(s))`, `{}`, api.KindException, 0.001, 1},
		{"its wall limit", `await new Promise((r) => setTimeout(r, 1000))`, `{"wall_ms": 50}`, api.KindTimeout, 0.001, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runWithLimits(e, tt.code, tt.limits)
			require.NotNil(t, r.Err)
			require.Equal(t, tt.kind, r.Err.Kind, r.Text)
			require.NotNil(t, r.Ledger)
			require.GreaterOrEqual(t, r.Ledger.Stats.ComputeMS, tt.minComputeMS)
			require.GreaterOrEqual(t, r.Ledger.Stats.MemoryBytes, tt.minMemory)
			require.GreaterOrEqual(t, r.Ledger.Stats.WallMS, r.Ledger.Stats.ComputeMS)
		})
	}
}

// The ledger lists at most api.MaxLedgerCalls calls and counts the rest;
// the failure's text names at most 30 of them.
func TestSandbox_ledger_bounded(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	for _, n := range []int{api.MaxLedgerCalls - 1, api.MaxLedgerCalls, api.MaxLedgerCalls + 1} {
		r := runProgram(e, fmt.Sprintf(`for (let i = 0; i < %d; i++) await tools["odd.name-x"]({}); throw new Error("x")`, n))
		require.NotNil(t, r.Ledger)
		require.Len(t, r.Ledger.Calls, min(n, api.MaxLedgerCalls))
		require.Equal(t, max(n-api.MaxLedgerCalls, 0), r.Ledger.Omitted)
		require.Equal(t, n, r.Ledger.Stats.Calls)
		require.Contains(t, r.Text, fmt.Sprintf(", and %d more", n-30))
	}
}

// A failure's text names at most 30 calls, then counts the others.
func TestSandbox_ledger_failureTextBounded(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	for _, n := range []int{29, 30, 31} {
		r := runProgram(e, fmt.Sprintf(`for (let i = 0; i < %d; i++) await tools["odd.name-x"]({}); throw new Error("x")`, n))
		require.NotNil(t, r.Err)
		require.Equal(t, min(n, 30), strings.Count(r.Text, "odd.name-x() ok"), r.Text)
		if n > 30 {
			require.True(t, strings.HasSuffix(r.Text, fmt.Sprintf(", and %d more", n-30)), r.Text)
		} else {
			require.NotContains(t, r.Text, "more")
		}
	}
}

// A tool named then does not make tools a thenable; tools.$call reaches it.
func TestSandbox_tools_thenIsNotThenable(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "then", Description: "A tool named then.",
		Body: func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput("called") }}))
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(realRuntime(t)))
	r := runProgram(e, `const t = await tools; return [t === tools, typeof tools.then, await tools.$call("then", {})]`)
	require.True(t, r.OK(), r.Text)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	require.JSONEq(t, `[true, "undefined", "called"]`, string(v.Result))
}

// An argument summary prefers a path, a name or a query, and is bounded.
func TestExecutor_ledger_argsSummary(t *testing.T) {
	long := strings.Repeat("é", 200)
	for _, tt := range []struct{ args, want string }{
		{`{"content":"x","path":"a.txt"}`, "a.txt"},
		{`{"n":1,"text":"hello   world"}`, "hello world"},
		{`{"n":1,"nested":{"path":"inner"}}`, ""},
		{`{}`, ""},
		{`{"query":"` + long + `"}`, strings.Repeat("é", (api.MaxLedgerArgsBytes-len("…"))/2) + "…"},
		{`{"path":"` + strings.Repeat("x", 2000) + `"}`, strings.Repeat("x", api.MaxLedgerArgsBytes-len("…")) + "…"},
	} {
		require.Equal(t, tt.want, executor.ArgsSummary([]byte(tt.args)), tt.args)
	}
}

// A syntax error is told in terms of the program as written, never of the
// function the host wraps it in.
func TestRunCode_syntaxError_neverShowsTheWrapper(t *testing.T) {
	e := newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(fakeRuntime(
		func(context.Context, wasmhost.Program, wasmhost.Dispatcher) (wasmhost.Outcome, error) {
			return wasmhost.Outcome{}, nil
		})))
	for _, tt := range []struct{ code, want string }{
		{"return 1 +", "line 1, column 11: unexpected end of input"},
		{"const a = [1,\n  2", `line 2, column 4: unexpected end of input: expected "]"`},
		{"return 1 }", `unexpected "}": the program closes a brace it did not open`},
		{"import fs from 'fs'\nreturn 1", "line 1, column 8: modules are not available"},
		{"  export const x = 1", "modules are not available"},
		{"const x = }", `line 1, column 11: Unexpected "}"`},
	} {
		r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode(tt.code)})
		require.NotNil(t, r.Err, tt.code)
		require.Equal(t, api.KindSyntax, r.Err.Kind, r.Text)
		require.Contains(t, r.Text, tt.want, tt.code)
	}
}

// What the prompt says a program does not have (sdkgen's rules), it does
// not have.
func TestSandbox_prompt_missingGlobalsAreMissing(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	r := runProgram(e, `return [typeof Intl, typeof fetch, typeof setInterval, typeof require, typeof process,
		typeof structuredClone, typeof TextEncoder, typeof URL].filter((t) => t !== "undefined").length`)
	require.True(t, r.OK(), r.Text)
	require.Equal(t, "0", r.Text)
	r = runProgram(e, `await import("fs")`)
	require.NotNil(t, r.Err)
	require.Contains(t, r.Text, "programs have no modules")
}
