package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

func realRuntime(t testing.TB) *wasmhost.Runtime { return testkit.Sandbox(t) }

// world is a registry of tools whose bodies record what they saw.
type world struct {
	reg               *registry.Registry
	running, peak     atomic.Int64
	writes            atomic.Int64
	exclusiveOverlaps atomic.Int64
	exclusiveRunning  atomic.Int64
}

func (w *world) enter() func() {
	n := w.running.Add(1)
	for {
		p := w.peak.Load()
		if n <= p || w.peak.CompareAndSwap(p, n) {
			break
		}
	}
	return func() { w.running.Add(-1) }
}

func newWorld(t testing.TB, mode api.Mode) *world {
	t.Helper()
	w := &world{reg: registry.New()}
	require.NoError(t, w.reg.DeclareMode(registry.Deployment, mode))
	users := []map[string]any{
		{"id": 1, "name": "ada", "active": true},
		{"id": 2, "name": "bob", "active": false},
		{"id": 3, "name": "cyd", "active": true},
	}
	tools := []registry.Tool{
		{
			Name: "users", Description: "List users.", ConcurrencySafe: true,
			OutputSchema: json.RawMessage(`{"type":"array"}`),
			Body: func(context.Context, api.Input) (api.Output, error) {
				defer w.enter()()
				return api.ValueOutput(users)
			},
		},
		{
			Name: "score", Description: "Score of a user.", ConcurrencySafe: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`),
			Body: func(_ context.Context, in api.Input) (api.Output, error) {
				defer w.enter()()
				var a struct{ ID int }
				_ = json.Unmarshal(in.Args, &a)
				time.Sleep(30 * time.Millisecond)
				return api.ValueOutput(a.ID * 10)
			},
		},
		{
			Name: "write", Description: "Write.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`),
			Body: func(context.Context, api.Input) (api.Output, error) {
				defer w.enter()()
				if w.exclusiveRunning.Add(1) > 1 || w.running.Load() > 1 {
					w.exclusiveOverlaps.Add(1)
				}
				defer w.exclusiveRunning.Add(-1)
				time.Sleep(5 * time.Millisecond)
				w.writes.Add(1)
				return api.ValueOutput(map[string]bool{"ok": true})
			},
		},
		{
			Name: "broken", Description: "Always fails.",
			Body: func(context.Context, api.Input) (api.Output, error) {
				return api.Output{}, fmt.Errorf("the disk is on fire")
			},
		},
		{
			Name: "odd.name-x", Description: "A name that is not an identifier.", ConcurrencySafe: true,
			Body: func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput("odd") },
		},
	}
	for _, tool := range tools {
		require.NoError(t, w.reg.Register(registry.Deployment, tool))
	}
	return w
}

func (w *world) executor(t testing.TB, cfg executor.Config) *executor.Executor {
	t.Helper()
	return newExecutor(t, w.reg, cfg.WithRuntime(realRuntime(t)))
}

func runProgram(e *executor.Executor, code string) api.Result {
	return e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode(code)})
}

func TestSandbox_programCallsFiltersLogsReturns(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	r := runProgram(e, `
		const all = await tools.users();
		const active = all.filter((u: {active: boolean}) => u.active);
		console.log("active:", active.length);
		const scores = await Promise.all(active.map((u: {id: number}) => tools.score({id: u.id})));
		return {names: active.map((u: {name: string}) => u.name), total: scores.reduce((a, b) => a + b, 0)};
	`)
	require.True(t, r.OK(), r.Text)
	require.JSONEq(t, `{"logs":["active: 2"],"result":{"names":["ada","cyd"],"total":40}}`, string(r.Value))
	require.Equal(t, "active: 2\nResult:\n{\n  \"names\": [\n    \"ada\",\n    \"cyd\"\n  ],\n  \"total\": 40\n}", r.Text)
}

func TestSandbox_promiseAllOverlapsSafeCalls(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	r := runProgram(e, `return await Promise.all([1, 2, 3].map((id) => tools.score({id})))`)
	require.True(t, r.OK(), r.Text)
	require.JSONEq(t, `{"logs":[],"result":[10,20,30]}`, string(r.Value))
	require.EqualValues(t, 3, w.peak.Load(), "three concurrency-safe calls overlap")
}

func TestSandbox_exclusiveCallsAreSerialised(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	r := runProgram(e, `
		await Promise.all([
			tools.write({path: "a", content: "1"}),
			tools.score({id: 1}),
			tools.write({path: "b", content: "2"}),
			tools.write({path: "c", content: "3"}),
		]);
		return "done";
	`)
	require.True(t, r.OK(), r.Text)
	require.EqualValues(t, 3, w.writes.Load())
	require.Zero(t, w.exclusiveOverlaps.Load(), "an exclusive call runs alone")
}

func TestSandbox_toolErrorCaughtAsToolCallError(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	r := runProgram(e, `
		try {
			await tools.broken();
			return "unreachable";
		} catch (err) {
			return {isToolCallError: err instanceof ToolCallError, name: err.name, tool: err.toolName, message: err.message};
		}
	`)
	require.True(t, r.OK(), r.Text)
	require.JSONEq(t, `{"logs":[],"result":{"isToolCallError":true,"name":"ToolCallError","tool":"broken","message":"the disk is on fire"}}`, string(r.Value))
}

func TestSandbox_denialReachesProgramWithReason(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig().WithGuard("", func(_ context.Context, req executor.Request) (string, error) {
		if req.Tool == "write" && strings.Contains(string(req.Args), "/etc") {
			return "writes outside the project are not allowed", nil
		}
		return "", nil
	}))
	r := runProgram(e, `
		try {
			await tools.write({path: "/etc/passwd", content: "x"});
		} catch (err) {
			return err.message;
		}
	`)
	require.True(t, r.OK(), r.Text)
	require.Contains(t, r.Text, "writes outside the project are not allowed")
	require.NotContains(t, r.Text, "DENIED", "codes never reach the program")
	require.Zero(t, w.writes.Load())
}

func TestSandbox_collapseHoldsEndToEnd(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	direct := e.Execute(context.Background(), executor.Call{Name: "write", Args: json.RawMessage(`{"path":"a","content":"x"}`)})
	require.Equal(t, api.CodeUnknownTool, direct.Err.Code)
	require.Zero(t, w.writes.Load())

	r := runProgram(e, `return await tools.write({path: "a", content: "x"})`)
	require.True(t, r.OK(), r.Text)
	require.EqualValues(t, 1, w.writes.Load())

	r = runProgram(e, `return await tools["odd.name-x"]()`)
	require.True(t, r.OK(), r.Text)
	require.JSONEq(t, `{"logs":[],"result":"odd"}`, string(r.Value))
}

func TestSandbox_programCannotReachRunCode(t *testing.T) {
	w := newWorld(t, api.ModeBoth)
	e := w.executor(t, executor.NewConfig())
	r := runProgram(e, `
		if (typeof tools.run_code !== "undefined") return "bound";
		return "not bound";
	`)
	// Either the binding is absent, or accessing it fails clearly; never a
	// working recursive run_code.
	if r.OK() {
		require.JSONEq(t, `{"logs":[],"result":"not bound"}`, string(r.Value))
	} else {
		require.Contains(t, r.Err.Message, "run_code")
	}
}

// Bad programs end in a clear CODE_RUN_FAILED with the right kind, and the
// next run is unaffected.
func TestSandbox_badPrograms(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig().WithLimits(api.Limits{
		ComputeTime: 2 * time.Second, WallTime: 5 * time.Second, MemoryBytes: 16 << 20, OutputBytes: 64 << 10, MaxCalls: 500,
	}))
	tests := []struct {
		name, code string
		kind       api.Kind
		contains   string
	}{
		{"syntax error", "const x = ;", "syntax", "line 1, column 11"},
		{"syntax error later", "const a = 1;\nconst b = {;", "syntax", "line 2"},
		{"thrown error", `throw new Error("bad input")`, "exception", "bad input"},
		{"thrown string", `throw "just a string"`, "exception", "just a string"},
		{"uncaught tool error", `await tools.broken()`, "exception", "the disk is on fire"},
		{"unknown binding", `await tools.nope()`, "exception", "nope"},
		{"infinite loop", `while (true) {}`, "timeout", ""},
		{"out of memory", `const a: ArrayBuffer[] = []; while (true) a.push(new ArrayBuffer(1 << 20));`, "memory", ""},
		{"deep recursion", `function f(n: number): number { return f(n + 1) + 1 } return f(0)`, "exception", "RangeError"},
		{"never settles", `await new Promise(() => {})`, "exception", ""},
		{"output flood", `for (let i = 0; i < 100000; i++) console.log("spam spam spam spam")`, "output-limit", "spam"},
		{"result too big", `return "x".repeat(100000)`, "output-limit", "output limit"},
		{"cyclic result", `const a: any = {}; a.self = a; return a`, "invalid-output", ""},
		{"bigint result", `return 10n`, "invalid-output", ""},
		{"too many calls", `for (let i = 0; i < 1000000; i++) await tools.users(); return 1`, "exception", "500"},
		{"require", `require("fs")`, "exception", "require"},
		{"process", `return process.env`, "exception", "process"},
		{"fetch", `await fetch("http://example.com")`, "exception", "fetch"},
		{"dynamic import", `await import("os")`, "exception", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runProgram(e, tt.code)
			require.NotNil(t, r.Err, "want a failure, got %s", r.Text)
			require.Equal(t, api.CodeCodeRunFailed, r.Err.Code, r.Text)
			require.Equal(t, tt.kind, r.Err.Kind, r.Text)
			require.Equal(t, "CODE_RUN_FAILED ("+string(tt.kind)+"): "+r.Err.Message, r.Err.Error(), "the code and kind are said once")
			require.NotContains(t, r.Err.Message, string(tt.kind)+")", "the message does not repeat the kind")
			require.Contains(t, r.Err.Message, tt.contains)

			ok := runProgram(e, `return 1 + 1`)
			require.True(t, ok.OK(), "the next run is unaffected: %s", ok.Text)
			require.JSONEq(t, `{"logs":[],"result":2}`, string(ok.Value))
		})
	}
}

func TestSandbox_logsSurviveFailure(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	r := runProgram(e, `console.log("step 1"); console.warn("careful"); throw new TypeError("step 2 failed")`)
	require.Equal(t, api.KindException, r.Err.Kind)
	require.Equal(t, []string{"step 1", "[warn] careful"}, r.Err.Logs)
	require.Contains(t, r.Err.Message, "TypeError: step 2 failed")
	require.Contains(t, r.Err.Message, "Logs before the failure:\nstep 1\n[warn] careful")
}

func TestSandbox_noOutput(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	r := runProgram(e, `const x = 1;`)
	require.True(t, r.OK(), r.Text)
	require.Equal(t, "(run_code completed with no output)", r.Text)
	require.JSONEq(t, `{"logs":[]}`, string(r.Value))
}

func TestSandbox_callerLimitsOnlyLower(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig().WithLimits(api.Limits{ComputeTime: 300 * time.Millisecond}))
	args, _ := json.Marshal(map[string]any{"code": "while (true) {}", "description": "spin", "limits": map[string]any{"timeout_ms": 60000}})
	start := time.Now()
	r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: args})
	require.Equal(t, api.KindTimeout, r.Err.Kind)
	require.Less(t, time.Since(start), 5*time.Second, "a caller cannot raise the deployment's limit")

	args, _ = json.Marshal(map[string]any{"code": "return 1", "description": "x", "limits": map[string]any{"timeout_ms": 0}})
	r = e.Execute(context.Background(), executor.Call{Name: "run_code", Args: args})
	require.Equal(t, api.CodeInvalidArgs, r.Err.Code, "limits are validated: %s", r.Text)

	args, _ = json.Marshal(map[string]any{"code": "return 1", "description": "  "})
	r = e.Execute(context.Background(), executor.Call{Name: "run_code", Args: args})
	require.Equal(t, api.CodeInvalidArgs, r.Err.Code, "the description must say something")
}

func TestSandbox_cancellationAborts(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	r := e.Execute(ctx, executor.Call{Name: "run_code", Args: runCode(`console.log("started"); while (true) {}`)})
	require.Equal(t, api.CodeCodeRunFailed, r.Err.Code, r.Text)
	require.Equal(t, api.KindAbort, r.Err.Kind)
	require.ErrorIs(t, r.AsError(), context.Canceled)
}

// 200 concurrent runs, good and failing, under -race: no goroutine left
// behind afterwards. Compute time is time inside the guest's exports, so
// with 200 guests sharing two cores under the race detector a good program
// can take seconds of it: the limit stays at its default (30 s), and the
// spinning programs set their own.
func TestSandbox_hammer(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	// A tool whose body ignores its context until the end of the test: its
	// calls run inline or not, are given up after the grace period, and the
	// program goes on (handed over to a new goroutine when inline).
	release := make(chan struct{})
	require.NoError(t, w.reg.Register(registry.Deployment, registry.Tool{
		Name: "stuck", ConcurrencySafe: true, Timeout: 20 * time.Millisecond,
		Body: func(context.Context, api.Input) (api.Output, error) {
			<-release
			return api.ValueOutput("late")
		},
	}))
	e := w.executor(t, executor.NewConfig())
	inline := inlineCounter(t)
	runtime.GC()
	before := runtime.NumGoroutine()

	programs := []struct {
		code string
		ok   bool
	}{
		{`return (await Promise.all([tools.score({id: 1}), tools.score({id: 2})])).length`, true},
		{`return (await tools.users()).length`, true},
		{`await tools.write({path: "p", content: "c"}); return 1`, true},
		{`throw new Error("planned")`, false},
		{`await tools.broken()`, false},
		{`const x = ;`, false},
		{`while (true) {}`, false},
		{`try { await tools.stuck() } catch (e) { if (!e.message.includes("timeout")) throw e } return (await tools.users()).length`, true},
		{`const r = await Promise.allSettled([tools.stuck(), tools.score({id: 1})]); return r[1].value`, true},
	}
	var wg sync.WaitGroup
	var failures atomic.Int64
	for i := range 200 {
		p := programs[i%len(programs)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p.code == `while (true) {}` {
				args, _ := json.Marshal(map[string]any{"code": p.code, "description": "spin", "limits": map[string]any{"timeout_ms": 50}})
				r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: args})
				if r.OK() || r.Err.Kind != "timeout" {
					t.Logf("while (true) {}: %s", r.Text)
					failures.Add(1)
				}
				return
			}
			if r := runProgram(e, p.code); r.OK() != p.ok {
				t.Logf("%s: %s", p.code, r.Text)
				failures.Add(1)
			}
		}()
	}
	wg.Wait()
	require.Zero(t, failures.Load())
	require.NotZero(t, inline("stuck"), "stuck calls were run inline, and handed over")
	require.NotZero(t, inline("users"), "and the programs went on inline")
	close(release)
	require.Eventually(t, func() bool { return runtime.NumGoroutine() <= before+2 }, 10*time.Second, 20*time.Millisecond,
		"goroutines leaked: before %d, now %d", before, runtime.NumGoroutine())
}

// The output limit (the hard cap) counts exactly the output as the sandbox
// shows it (logs, a newline, a string raw or other JSON as it is): at the
// limit a run succeeds, one byte below it fails, whatever the shape of the
// output.
func TestSandbox_outputLimitBoundary(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	for _, code := range []string{
		`return "x".repeat(100)`,
		`return "line\n".repeat(20)`,
		`console.log("a".repeat(40)); console.log("b".repeat(40))`,
		`console.log("log"); return {items: [1, 2, 3], name: "é"}`,
	} {
		t.Run(code, func(t *testing.T) {
			free := runProgram(e, code)
			require.True(t, free.OK(), free.Text)
			size := shownSize(t, free.Value)
			run := func(limit int) api.Result {
				args, _ := json.Marshal(map[string]any{"code": code, "description": "d", "limits": map[string]any{"output_bytes": limit}})
				return e.Execute(context.Background(), executor.Call{Name: "run_code", Args: args})
			}
			at := run(size)
			require.True(t, at.OK(), "at the limit (%d bytes): %s", size, at.Text)
			require.Equal(t, free.Text, at.Text)
			below := run(size - 1)
			require.NotNil(t, below.Err, "one byte over the limit must fail")
			require.Equal(t, api.KindOutputLimit, below.Err.Kind, below.Text)
		})
	}
}

// Stack positions point at the TypeScript as the model wrote it, not at the
// stripped JavaScript.
func TestSandbox_stackPositionsAreTheUsers(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	r := runProgram(e, "type N = number;\n\n// a comment esbuild drops\ninterface P { x: N }\nfunction boom(p: P): never {\n  throw new Error(`bad ${p.x}`);\n}\nboom({x: 1});")
	require.Equal(t, api.KindException, r.Err.Kind, r.Text)
	require.Regexp(t, `at boom \(<program>:6:\d+\)`, r.Err.Message)
	require.Regexp(t, `<program>:8:\d+`, r.Err.Message)
	require.Regexp(t, `^Error: bad 1\n`, r.Err.Message, "the message does not repeat the code or the kind")
	require.Regexp(t, `at boom \(<program>:6:\d+\)\n.*<program>:8:\d+`, r.Err.Stack, "the stack is data, mapped like the message")
	require.Contains(t, r.Err.Message, r.Err.Stack)
	require.Nil(t, r.Err.Location, "an exception has a stack, not a location")
}

// Absurdly high limits a caller asks for are clamped to the deployment's,
// never overflow into a broken run.
func TestSandbox_hugeCallerLimits(t *testing.T) {
	w := newWorld(t, api.ModePTC)
	e := w.executor(t, executor.NewConfig())
	args := json.RawMessage(`{"code": "return 1", "description": "d", "limits": {"timeout_ms": 9223372036854775807, "wall_ms": 9223372036854775807, "memory_mb": 9223372036854775807, "output_bytes": 9223372036854775807, "max_calls": 9223372036854775807}}`)
	r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: args})
	require.True(t, r.OK(), r.Text)
	require.JSONEq(t, `{"logs":[],"result":1}`, string(r.Value))
}

// shownSize is the size of a run's output as the hard cap counts it.
func shownSize(t *testing.T, value json.RawMessage) int {
	t.Helper()
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(value, &v))
	size := len(strings.Join(v.Logs, "\n"))
	if len(v.Result) > 0 {
		if len(v.Logs) > 0 {
			size++
		}
		var s string
		if json.Unmarshal(v.Result, &s) == nil {
			size += len(s)
		} else {
			size += len(v.Result)
		}
	}
	return size
}
