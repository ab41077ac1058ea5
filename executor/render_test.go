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

// A result that fits the output limit as JSON but not indented fails with
// output-limit, as it always did, and the host renders no more of it than
// the limit: it allocates a few times the limit, not the 104 MB.
func TestRunCode_outputLimit_deepResultCostsTheLimit(t *testing.T) {
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

	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeCodeRunFailed, r.Err.Code, r.Text)
	require.Equal(t, api.KindOutputLimit, r.Err.Kind)
	var size int
	_, err := fmt.Sscanf(r.Err.Message, "the output is %d bytes, over the limit of 1048576;", &size)
	require.NoError(t, err, r.Err.Message)
	require.Greater(t, size, 100_000_000, "the size is the whole indented text's")
	require.Contains(t, r.Err.Message, "The output began:\nbuilding\n[\n  [\n    [")
	require.LessOrEqual(t, len(r.Err.Message), limit+300, "the message shows at most the limit of the output")
	require.Equal(t, []string{"building"}, r.Err.Logs)
	require.Len(t, notes, 1)
	require.Less(t, bytes, uint64(16*limit), "bytes allocated by the host")
}

// The same through the real sandbox: the program builds the value itself.
func TestSandbox_outputLimit_deepResult(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	r := runProgram(e, fmt.Sprintf(`let v: unknown = new Array(%d).fill(0); for (let i = 1; i < 99; i++) v = [v]; return v;`, (api.DefaultOutputBytes-2*99)/2))
	require.NotNil(t, r.Err, r.Text)
	require.Equal(t, api.KindOutputLimit, r.Err.Kind, r.Text)
	require.Contains(t, r.Err.Message, "over the limit of 1048576")
	require.LessOrEqual(t, len(r.Err.Message), api.DefaultOutputBytes+300)
}

// The output limit is reached exactly: a text of the limit's size passes,
// one byte more fails, whether the excess is in the logs or the result.
func TestRunCode_outputLimit_atAndPastTheLimit(t *testing.T) {
	value := json.RawMessage(`{"a":[1,2]}`) // 30 bytes indented
	indented := "{\n  \"a\": [\n    1,\n    2\n  ]\n}"
	for _, tt := range []struct {
		limit int
		ok    bool
	}{
		{len("log\n") + len(indented) + 1, true},
		{len("log\n") + len(indented), true},
		{len("log\n") + len(indented) - 1, false},
		{len(value), false}, // the value's JSON would have fitted
	} {
		rt := fakeRuntime(func(context.Context, wasmhost.Program, wasmhost.Dispatcher) (wasmhost.Outcome, error) {
			return wasmhost.Outcome{Logs: []string{"log"}, Result: value}, nil
		})
		e := newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(rt).WithLimits(api.Limits{OutputBytes: tt.limit}))
		r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("return v")})
		require.Equal(t, tt.ok, r.OK(), "limit %d: %s", tt.limit, r.Text)
		if tt.ok {
			require.Equal(t, "log\n"+indented, r.Text)
			continue
		}
		require.Equal(t, api.KindOutputLimit, r.Err.Kind)
		require.Contains(t, r.Err.Message, fmt.Sprintf("the output is %d bytes, over the limit of %d;", len("log\n")+len(indented), tt.limit))
		require.True(t, strings.HasSuffix(r.Err.Message, "The output began:\n"+("log\n" + indented)[:tt.limit]), r.Err.Message)
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
