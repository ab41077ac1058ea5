package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// sessionWorld is a registry with a slow tool, and an executor on the real
// sandbox with limits l.
func sessionExecutor(t *testing.T, l executor.SessionLimits) (*executor.Executor, *registry.Registry) {
	t.Helper()
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	require.NoError(t, reg.NewScope("agent", registry.Deployment))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{
		Name: "wait", Description: "Wait for ms milliseconds.", ConcurrencySafe: true,
		Body: func(ctx context.Context, in api.Input) (api.Output, error) {
			var a struct{ Ms int }
			if err := json.Unmarshal(in.Args, &a); err != nil {
				return api.Output{}, err
			}
			select {
			case <-time.After(time.Duration(a.Ms) * time.Millisecond):
			case <-ctx.Done():
			}
			return api.ValueOutput(a.Ms)
		},
	}))
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(realRuntime(t)).WithSessions(l))
	t.Cleanup(func() {
		for _, scope := range []string{"", "agent"} {
			for _, s := range e.Sessions(scope) {
				closedOK(t)(e.CloseSession(context.Background(), scope, s.Name))
			}
		}
	})
	return e, reg
}

// inSession runs code in session name of scope.
func inSession(e *executor.Executor, scope, name, code string, limits ...string) api.Result {
	args := runCode(code)
	if len(limits) > 0 {
		args, _ = json.Marshal(map[string]any{"code": code, "description": "test program", "limits": json.RawMessage(limits[0])})
	}
	return e.Execute(context.Background(), executor.Call{Scope: scope, Name: registry.RunCode, Args: args, Session: name})
}

// resultOf returns the program's result of a successful run_code call.
func resultOf(t *testing.T, r api.Result) string {
	t.Helper()
	require.Nil(t, r.Err, "%v", r.Err)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	return string(v.Result)
}

func stateOf(e *executor.Executor, scope, name string) wasmhost.SessionState {
	for _, s := range e.Sessions(scope) {
		if s.Name == name {
			return s.State
		}
	}
	return -1
}

func TestExecutor_Session_globalsPersistAcrossPrograms(t *testing.T) {
	e, _ := sessionExecutor(t, executor.SessionLimits{})
	require.Equal(t, `1`, resultOf(t, inSession(e, "", "s", `const a: number = 1; function f(x: number) { return x * 10 } globalThis.g = 5; return a`)))
	require.Equal(t, `[10,5,2]`, resultOf(t, inSession(e, "", "s", `let b = a + 1; return [f(a), g, b]`)))
	require.Equal(t, `[1,2,"again"]`, resultOf(t, inSession(e, "", "s", `const c = "again"; return [a, b, c]`)))
	r := inSession(e, "", "", `return typeof a`)
	require.Equal(t, `"undefined"`, resultOf(t, r), "a call without a session has a fresh state")
}

func TestExecutor_Session_throwKeepsState(t *testing.T) {
	e, _ := sessionExecutor(t, executor.SessionLimits{})
	resultOf(t, inSession(e, "", "s", `globalThis.n = 1; return n`))
	r := inSession(e, "", "s", `n = 2; throw new Error("boom")`)
	require.NotNil(t, r.Err)
	require.Equal(t, api.KindException, r.Err.Kind)
	require.NotContains(t, r.Err.Message, "reset")
	require.Equal(t, `2`, resultOf(t, inSession(e, "", "s", `return n`)))
}

func TestExecutor_Session_timeoutResetsWithMessage(t *testing.T) {
	e, _ := sessionExecutor(t, executor.SessionLimits{})
	resultOf(t, inSession(e, "", "s", `globalThis.n = 1; return n`))
	r := inSession(e, "", "s", `for (;;) {}`, `{"timeout_ms": 200}`)
	require.NotNil(t, r.Err)
	require.Equal(t, api.KindTimeout, r.Err.Kind)
	require.Contains(t, r.Err.Message, "[ptcx] the session's state was reset: the host stopped this program")
	require.Equal(t, `"undefined"`, resultOf(t, inSession(e, "", "s", `return typeof n`)))
}

func TestExecutor_Session_scopesAreIsolated(t *testing.T) {
	e, _ := sessionExecutor(t, executor.SessionLimits{})
	resultOf(t, inSession(e, "", "same", `globalThis.secret = "deployment"; const mine = 1; return 1`))
	require.Equal(t, `["undefined","undefined"]`, resultOf(t, inSession(e, "agent", "same", `return [typeof secret, typeof mine]`)))
	resultOf(t, inSession(e, "agent", "same", `globalThis.secret = "agent"; return 1`))
	require.Equal(t, `"deployment"`, resultOf(t, inSession(e, "", "same", `return secret`)))
	require.Len(t, e.Sessions(""), 1)
	require.Len(t, e.Sessions("agent"), 1)
}

func TestExecutor_Session_maxPerScope(t *testing.T) {
	e, _ := sessionExecutor(t, executor.SessionLimits{MaxPerScope: 2})
	resultOf(t, inSession(e, "", "a", `return 1`)) // below
	resultOf(t, inSession(e, "", "b", `return 1`)) // at
	r := inSession(e, "", "c", `return 1`)         // past
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeBusy, r.Err.Code)
	require.Contains(t, r.Err.Message, `scope "deployment" already has 2 sessions (the limit)`)
	resultOf(t, inSession(e, "", "a", `return 1`)) // an existing one still runs
	resultOf(t, inSession(e, "agent", "c", `return 1`))
	require.True(t, closedOK(t)(e.CloseSession(context.Background(), "", "a")))
	require.False(t, closedOK(t)(e.CloseSession(context.Background(), "", "a")))
	resultOf(t, inSession(e, "", "c", `return 1`))
}

func TestExecutor_Session_maxLiveEvictsLeastRecentlyUsedToBytes(t *testing.T) {
	e, _ := sessionExecutor(t, executor.SessionLimits{MaxLivePerScope: 2})
	resultOf(t, inSession(e, "", "a", `const va = "a"; return 1`)) // below
	resultOf(t, inSession(e, "", "b", `const vb = "b"; return 1`)) // at
	require.Equal(t, wasmhost.SessionLive, stateOf(e, "", "a"))
	require.Equal(t, wasmhost.SessionLive, stateOf(e, "", "b"))
	resultOf(t, inSession(e, "", "c", `const vc = "c"; return 1`)) // past: a, the least recently used, goes to bytes
	require.Equal(t, wasmhost.SessionSuspended, stateOf(e, "", "a"))
	require.Equal(t, wasmhost.SessionLive, stateOf(e, "", "b"))
	require.Equal(t, wasmhost.SessionLive, stateOf(e, "", "c"))
	require.Equal(t, `"a"`, resultOf(t, inSession(e, "", "a", `return va`))) // resumed transparently; b goes
	require.Equal(t, wasmhost.SessionSuspended, stateOf(e, "", "b"))
	require.Equal(t, `"b"`, resultOf(t, inSession(e, "", "b", `return vb`)))
}

func TestExecutor_Session_maxLiveRefusesWhenAllRun(t *testing.T) {
	e, _ := sessionExecutor(t, executor.SessionLimits{MaxLivePerScope: 1})
	done := make(chan api.Result, 1)
	go func() { done <- inSession(e, "", "a", `await tools.wait({ms: 1000}); return 1`) }()
	require.Eventually(t, func() bool { return stateOf(e, "", "a") == wasmhost.SessionRunning }, 10*time.Second, time.Millisecond)
	r := inSession(e, "", "b", `return 1`)
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeBusy, r.Err.Code)
	require.Contains(t, r.Err.Message, "already has 1 sessions live, all running a program")
	require.Equal(t, `1`, resultOf(t, <-done))
	resultOf(t, inSession(e, "", "b", `return 1`))
}

func TestExecutor_Session_idleSuspendsAndResumesTransparently(t *testing.T) {
	e, _ := sessionExecutor(t, executor.SessionLimits{IdleSuspend: 50 * time.Millisecond})
	resultOf(t, inSession(e, "", "s", `const big = "z".repeat(100000); let k = 1; return k`))
	require.Eventually(t, func() bool { return stateOf(e, "", "s") == wasmhost.SessionSuspended }, 10*time.Second, 5*time.Millisecond)
	require.Positive(t, e.Sessions("")[0].Bytes)
	r := inSession(e, "", "s", `k++; return [big.length, k]`)
	require.Equal(t, `[100000,2]`, resultOf(t, r))
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	require.Empty(t, v.Logs, "a transparent resume says nothing")
}

// inWorld runs code in session name in a deterministic world, so that
// its state, and so its bytes, are the same from run to run.
func inWorld(e *executor.Executor, name, code string) api.Result {
	return e.Execute(context.Background(), executor.Call{Name: registry.RunCode, Args: runCode(code), Session: name,
		World: &wasmhost.World{Seed: 3}})
}

func TestExecutor_Session_maxBytes(t *testing.T) {
	// The size of one session's state once suspended, measured first.
	program := `globalThis.data = "q".repeat(5000); return 1`
	e, _ := sessionExecutor(t, executor.SessionLimits{IdleSuspend: 20 * time.Millisecond})
	resultOf(t, inWorld(e, "s", program))
	require.Eventually(t, func() bool { return stateOf(e, "", "s") == wasmhost.SessionSuspended }, 10*time.Second, 5*time.Millisecond)
	size := e.Sessions("")[0].Bytes
	for _, tc := range []struct {
		name  string
		limit int
		kept  bool
	}{
		{"below", size + 1, true},
		{"at", size, true},
		{"past", size - 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := sessionExecutor(t, executor.SessionLimits{IdleSuspend: 20 * time.Millisecond, MaxBytes: tc.limit})
			resultOf(t, inWorld(e, "s", program))
			require.Eventually(t, func() bool { return stateOf(e, "", "s") != wasmhost.SessionLive }, 10*time.Second, 5*time.Millisecond)
			r := inSession(e, "", "s", `return typeof data`)
			if tc.kept {
				require.Equal(t, `"string"`, resultOf(t, r))
				return
			}
			require.Equal(t, `"undefined"`, resultOf(t, r))
			require.Contains(t, r.Text, fmt.Sprintf("over the limit of %d bytes a session may keep", tc.limit))
			var v executor.RunCodeValue
			require.NoError(t, json.Unmarshal(r.Value, &v))
			require.Contains(t, v.Logs[0], "[ptcx] the session's state was reset before this program")
		})
	}
}

func TestExecutor_Session_concurrentCallsWaitTheirTurn(t *testing.T) {
	e, _ := sessionExecutor(t, executor.SessionLimits{})
	resultOf(t, inSession(e, "", "s", `globalThis.count = 0; return 0`))
	const n = 8
	results := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = resultOf(t, inSession(e, "", "s", `const mine = count; await tools.wait({ms: 5}); count = mine + 1; return count`))
		}()
	}
	wg.Wait()
	sort.Slice(results, func(i, j int) bool {
		return len(results[i]) < len(results[j]) || (len(results[i]) == len(results[j]) && results[i] < results[j])
	})
	require.Equal(t, []string{"1", "2", "3", "4", "5", "6", "7", "8"}, results, "one program at a time: no update lost")
	require.Equal(t, `8`, resultOf(t, inSession(e, "", "s", `return count`)))
}

func TestExecutor_Session_waitIsBounded(t *testing.T) {
	e, _ := sessionExecutor(t, executor.SessionLimits{Wait: 100 * time.Millisecond})
	done := make(chan api.Result, 1)
	go func() { done <- inSession(e, "", "s", `await tools.wait({ms: 2000}); return 1`) }()
	require.Eventually(t, func() bool { return stateOf(e, "", "s") == wasmhost.SessionRunning }, 10*time.Second, time.Millisecond)
	r := inSession(e, "", "s", `return 2`)
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeBusy, r.Err.Code)
	require.Contains(t, r.Err.Message, `session "s" was running another program for the 100ms this call may wait`)
	require.Equal(t, `1`, resultOf(t, <-done))
}

func TestExecutor_CloseSession_dropsState(t *testing.T) {
	e, _ := sessionExecutor(t, executor.SessionLimits{})
	resultOf(t, inSession(e, "", "s", `globalThis.x = 1; return 1`))
	require.True(t, closedOK(t)(e.CloseSession(context.Background(), "", "s")))
	require.Empty(t, e.Sessions(""))
	require.Equal(t, `"undefined"`, resultOf(t, inSession(e, "", "s", `return typeof x`)))
}

func TestNew_negativeSessionLimitsFail(t *testing.T) {
	_, err := executor.New(registry.New(), executor.NewConfig().WithSessions(executor.SessionLimits{MaxBytes: -1}))
	require.ErrorContains(t, err, "negative session limits")
}

func TestExecutor_Session_hammerEvictionAcrossSessions(t *testing.T) {
	e, _ := sessionExecutor(t, executor.SessionLimits{MaxLivePerScope: 2})
	const sessions, calls = 4, 5
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("s%d", i)
			run := func(code string) api.Result {
				for range 10000 {
					r := inSession(e, "", name, code)
					if r.Err == nil || r.Err.Code != api.CodeBusy {
						return r
					}
					// Every live session was running: a retryable refusal.
					require.Contains(t, r.Err.Message, "sessions live, all running a program")
					time.Sleep(time.Millisecond)
				}
				require.FailNow(t, "still BUSY after 10,000 tries")
				return api.Result{}
			}
			require.Equal(t, "0", resultOf(t, run(`let k = 0; return k`)))
			for j := 1; j <= calls; j++ {
				require.Equal(t, fmt.Sprint(j), resultOf(t, run(`k++; await tools.wait({ms: 1}); return k`)), name)
			}
		}()
	}
	wg.Wait()
	live := 0
	for _, s := range e.Sessions("") {
		if s.State == wasmhost.SessionLive {
			live++
		}
	}
	require.LessOrEqual(t, live, 2)
}

func TestExecutor_Session_pendingCallsDoNotReachTheNextProgram(t *testing.T) {
	e, _ := sessionExecutor(t, executor.SessionLimits{})
	first := inSession(e, "", "s", `tools.wait({ms: 100}).then(() => { globalThis.leak = 1 }); return 1`)
	require.Equal(t, `1`, resultOf(t, first))
	second := inSession(e, "", "s", `const waited = await tools.wait({ms: 300}); return [waited, typeof leak]`)
	require.Equal(t, `[300,"undefined"]`, resultOf(t, second))
	require.NotNil(t, second.Ledger)
	require.Len(t, second.Ledger.Calls, 1, "the next program's ledger has its own calls only")
}
