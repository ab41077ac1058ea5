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

// ptcRegistry is an empty registry in ptc mode: run_code alone.
func ptcRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	return reg
}

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
// value whole. The hard cap is the default 1 MiB, so the longest string
// is just under it (a 2 MB one is over the host's cap: shape_test.go
// shapes one).
func TestSandbox_modelBudget_largeOutputsSucceed(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	for _, tt := range []struct {
		name, code string
		json, logs bool
		marker     string
		check      func(t *testing.T, v executor.RunCodeValue)
	}{
		{"a 1,000,000-byte string", `return {s: "ab".repeat(500_000)}`, true, false, "more bytes)", func(t *testing.T, v executor.RunCodeValue) {
			var got struct{ S string }
			require.NoError(t, json.Unmarshal(v.Result, &got))
			require.Len(t, got.S, 1_000_000)
		}},
		{"a 100,000-item array", `return Array.from({length: 100_000}, (_, i) => i)`, true, false, "more items", func(t *testing.T, v executor.RunCodeValue) {
			var got []int
			require.NoError(t, json.Unmarshal(v.Result, &got))
			require.Len(t, got, 100_000)
			require.Equal(t, 99_999, got[99_999])
		}},
		{"a 200-deep object", `let v: any = {leaf: 1}; for (let i = 0; i < 199; i++) v = {a: v}; return v`, true, false, "… an object of 1 keys", func(t *testing.T, v executor.RunCodeValue) {
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
