package wasmhost_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// runIn runs js as the next program of s.
func runIn(t testing.TB, rt *wasmhost.Runtime, s *wasmhost.Session, js string, limits api.Limits) (wasmhost.Outcome, *wasmhost.RunError) {
	t.Helper()
	d := &tools{}
	out, err := rt.Run(context.Background(), wasmhost.Program{JS: js, Tools: toolNames, Limits: limits, Session: s}, d)
	d.wg.Wait()
	if err == nil {
		return out, nil
	}
	var re *wasmhost.RunError
	require.True(t, errors.As(err, &re), "Run failed without a RunError: %v", err)
	return out, re
}

func requireResult(t testing.TB, rt *wasmhost.Runtime, s *wasmhost.Session, js, want string) {
	t.Helper()
	out, re := runIn(t, rt, s, js, api.Limits{})
	require.Nil(t, re, "%s", js)
	require.JSONEq(t, want, string(out.Result), js)
}

func TestSession_Run_declarationsPersist(t *testing.T) {
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	requireResult(t, rt, s, `const a = 1; let b = 2; var c = 3; function f() { return a + b + c; }
		class K { get v() { return 7; } } globalThis.g = 4; return f()`, `6`)
	requireResult(t, rt, s, `const d = a + b; b = 20; return [f(), d, new K().v, g]`, `[24, 3, 7, 4]`)
	requireResult(t, rt, s, `const a = "shadowed"; return [a, b, c, d, typeof f, typeof K]`,
		`["shadowed", 20, 3, 3, "function", "function"]`)
	require.Equal(t, wasmhost.SessionLive, s.State())
}

func TestSession_Run_separateSessionsShareNothing(t *testing.T) {
	rt := newRuntime(t, testConfig())
	one, two := newSession(t, rt), newSession(t, rt)
	requireResult(t, rt, one, `const x = 1; globalThis.y = 2; return x`, `1`)
	requireResult(t, rt, two, `return [typeof x, typeof y]`, `["undefined", "undefined"]`)
	out, re, _ := runJS(t, rt, `return [typeof x, typeof y]`, api.Limits{})
	require.Nil(t, re)
	require.JSONEq(t, `["undefined", "undefined"]`, string(out.Result))
}

func TestSession_Run_throwKeepsState(t *testing.T) {
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	requireResult(t, rt, s, `let n = 1; return n`, `1`)
	for _, tc := range []struct {
		js   string
		kind api.Kind
	}{
		{`n = 2; const before = 3; throw new Error("boom"); const after = 4;`, api.KindException},
		{`n = n +;`, api.KindSyntax},
		{`n = 3; return 10n`, api.KindInvalidOutput},
	} {
		_, re := runIn(t, rt, s, tc.js, api.Limits{})
		require.NotNil(t, re, tc.js)
		require.Equal(t, tc.kind, re.Kind, re.Message)
		require.False(t, re.SessionReset, tc.js)
	}
	requireResult(t, rt, s, `return [n, before]`, `[3, 3]`)
	_, re := runIn(t, rt, s, `return after`, api.Limits{})
	require.NotNil(t, re)
	require.Equal(t, api.KindException, re.Kind)
	require.Contains(t, re.Message, "after")
}

func TestSession_Run_syntaxErrorIsLocated(t *testing.T) {
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	requireResult(t, rt, s, `const z = 1; return z`, `1`)
	_, re := runIn(t, rt, s, "const q = 1;\nq = q +;", api.Limits{})
	require.NotNil(t, re)
	require.Equal(t, api.KindSyntax, re.Kind)
	require.Equal(t, 2, re.Line)
	_, re = runIn(t, rt, s, "throw new Error('here')", api.Limits{})
	require.NotNil(t, re)
	require.Contains(t, re.Stack, "<program>:1:")
	require.NotContains(t, re.Stack, "<input>")
}

func TestSession_Run_hostLimitResets(t *testing.T) {
	rt := newRuntime(t, testConfig())
	for _, tc := range []struct {
		name   string
		js     string
		limits api.Limits
		kind   api.Kind
	}{
		{"compute", `for (;;) {}`, api.Limits{ComputeTime: 200 * time.Millisecond}, api.KindTimeout},
		{"wall", `await tools.hang({})`, api.Limits{WallTime: 200 * time.Millisecond}, api.KindTimeout},
		{"memory", `const a = []; for (;;) a.push("x".repeat(1 << 16) + a.length)`, api.Limits{MemoryBytes: 8 << 20}, api.KindMemory},
		{"output", `for (;;) console.log("x".repeat(1000))`, api.Limits{OutputBytes: 10000}, api.KindOutputLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSession(t, rt)
			requireResult(t, rt, s, `globalThis.kept = 1; const local = 2; return kept`, `1`)
			_, re := runIn(t, rt, s, tc.js, tc.limits)
			require.NotNil(t, re)
			require.Equal(t, tc.kind, re.Kind, re.Message)
			require.True(t, re.SessionReset)
			require.Equal(t, wasmhost.SessionEmpty, s.State())
			requireResult(t, rt, s, `return [typeof kept, typeof local]`, `["undefined", "undefined"]`)
		})
	}
}

func TestSession_Run_pendingCallsAndTimersDoNotLeak(t *testing.T) {
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	requireResult(t, rt, s, `tools.slow({ms: 30}).then(() => { globalThis.late = true });
		setTimeout(() => { globalThis.fired = true }, 1); return 1`, `1`)
	requireResult(t, rt, s, `await new Promise((r) => setTimeout(r, 100));
		const e = await tools.echo({n: 1}); return [e.n, typeof late, typeof fired]`, `[1, "undefined", "undefined"]`)
}

func TestSession_Suspend_resumesTransparently(t *testing.T) {
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	requireResult(t, rt, s, `const big = "y".repeat(1 << 20); let n = 41; globalThis.h = {deep: [1, 2]}; return n`, `41`)
	n, err := s.Suspend(context.Background())
	require.NoError(t, err)
	require.Positive(t, n)
	require.Equal(t, wasmhost.SessionSuspended, s.State())
	require.Equal(t, n, s.Bytes())
	requireResult(t, rt, s, `n++; return [big.length, n, h.deep[1]]`, `[1048576, 42, 2]`)
	require.Equal(t, wasmhost.SessionLive, s.State())
	_, err = s.Suspend(context.Background())
	require.NoError(t, err)
	requireResult(t, rt, s, `return n`, `42`)
}

func TestSession_Run_concurrentRunIsRefused(t *testing.T) {
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	requireResult(t, rt, s, `globalThis.v = 1; return v`, `1`)
	first := make(chan *wasmhost.RunError, 1)
	go func() {
		_, re := runIn(t, rt, s, `await tools.slow({ms: 500}); return ++v`, api.Limits{})
		first <- re
	}()
	require.Eventually(t, func() bool { return s.State() == wasmhost.SessionRunning }, 5*time.Second, time.Millisecond)
	_, re := runIn(t, rt, s, `return v`, api.Limits{})
	require.NotNil(t, re)
	require.Equal(t, api.KindAbort, re.Kind)
	require.ErrorIs(t, re, wasmhost.ErrSessionBusy)
	require.False(t, re.SessionReset)
	_, err := s.Suspend(context.Background())
	require.ErrorIs(t, err, wasmhost.ErrSessionBusy)
	require.Nil(t, <-first)
	requireResult(t, rt, s, `return v`, `2`)
}

func TestSession_Close_refusesLaterRuns(t *testing.T) {
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	requireResult(t, rt, s, `return 1`, `1`)
	s.Close(context.Background())
	_, re := runIn(t, rt, s, `return 1`, api.Limits{})
	require.NotNil(t, re)
	require.ErrorIs(t, re, wasmhost.ErrSessionClosed)
	require.Equal(t, wasmhost.SessionEmpty, s.State())
}

func TestSession_Run_worldIsPerRun(t *testing.T) {
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	w := &wasmhost.World{Seed: 7}
	var got []string
	for range 2 {
		d := &tools{}
		out, err := rt.Run(context.Background(), wasmhost.Program{JS: `return [Math.random(), Date.now()]`, Session: s, World: w}, d)
		require.NoError(t, err)
		got = append(got, string(out.Result))
	}
	require.Equal(t, got[0], got[1])
}

func TestSession_Run_hammer(t *testing.T) {
	rt := newRuntime(t, testConfig())
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newSession(t, rt)
			requireResult(t, rt, s, `let k = 0; return k`, `0`)
			for j := 1; j <= 5; j++ {
				if j == 3 && i%2 == 0 {
					_, err := s.Suspend(context.Background())
					require.NoError(t, err)
				}
				out, re := runIn(t, rt, s, `k++; await tools.echo({}); return k`, api.Limits{})
				require.Nil(t, re)
				require.JSONEq(t, string(rune('0'+j)), string(out.Result))
			}
			s.Close(context.Background())
		}()
	}
	wg.Wait()
	requireHealthy(t, rt)
}

func newSession(t testing.TB, rt *wasmhost.Runtime) *wasmhost.Session {
	t.Helper()
	s, err := rt.NewSession(context.Background())
	require.NoError(t, err)
	return s
}

func TestRuntime_NewSession_closed(t *testing.T) {
	rt, err := wasmhost.New(context.Background(), testConfig())
	require.NoError(t, err)
	require.NoError(t, rt.Close(context.Background()))
	_, err = rt.NewSession(context.Background())
	require.ErrorIs(t, err, wasmhost.ErrClosed)
}

func TestRuntime_Run_sessionRefusals(t *testing.T) {
	noImage := newRuntime(t, testConfig().WithImage(false))
	s := newSession(t, noImage)
	_, err := noImage.Run(context.Background(), wasmhost.Program{JS: `return 1`, Session: s}, &tools{})
	require.ErrorContains(t, err, "sessions need the Runtime's initialised image")

	rt := sharedRuntime(t)
	other := newSession(t, newRuntime(t, testConfig()))
	_, err = rt.Run(context.Background(), wasmhost.Program{JS: `return 1`, Session: other}, &tools{})
	require.ErrorContains(t, err, "the Session is another Runtime's")
	mine := newSession(t, rt)
	_, err = rt.Run(context.Background(), wasmhost.Program{JS: `return 1`, Session: mine,
		Suspend: func(wasmhost.Quiescence) bool { return true }}, &tools{})
	require.ErrorContains(t, err, "a run in a Session cannot be suspended")
}

func TestSession_liveSessionYieldsToARun(t *testing.T) {
	const limit = 16 << 20
	rt := newRuntime(t, testConfig().WithPool(0).WithLimits(api.Limits{MemoryBytes: limit}).
		WithMaxCommittedMemory(limit+(limit/2)).WithAdmissionWait(0))
	s := newSession(t, rt)
	requireResult(t, rt, s, `globalThis.big = "w".repeat(10 << 20); return big.length`, `10485760`)
	require.Equal(t, wasmhost.SessionLive, s.State())
	require.Greater(t, s.Bytes(), limit/2, "the live session holds more than half the cap")
	require.Equal(t, wasmhost.SessionStats{Live: 1, Bytes: int64(s.Bytes())}, rt.SessionStats())
	out, re, _ := runJS(t, rt, `return 1`, api.Limits{})
	require.Nil(t, re, "a run that does not fit beside the live session makes it yield")
	require.JSONEq(t, `1`, string(out.Result))
	require.Equal(t, wasmhost.SessionSuspended, s.State())
	require.Equal(t, wasmhost.SessionStats{}, rt.SessionStats())
	requireResult(t, rt, s, `return big.length`, `10485760`)
	require.Empty(t, s.Notice())
}

func TestSession_Run_memoryOverALaterLimitResets(t *testing.T) {
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	requireResult(t, rt, s, `globalThis.big = "m".repeat(12 << 20); return 1`, `1`)
	_, re := runIn(t, rt, s, `return big.length`, api.Limits{MemoryBytes: 8 << 20})
	require.NotNil(t, re)
	require.Equal(t, api.KindMemory, re.Kind)
	require.True(t, re.SessionReset)
	require.Contains(t, re.Message, "over this program's memory limit")
	requireResult(t, rt, s, `return typeof big`, `"undefined"`)
}

func TestSession_Run_stackMatchesAFreshRun(t *testing.T) {
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	for _, js := range []string{
		`  throw new Error("line one")`,
		"const a = 1;\n  function f() { throw new TypeError(\"deeper\"); }\n f()",
		`const x = ;`,
		"const a = 1\n  const r = /a/gg",
		`return /(/`,
	} {
		_, fresh, _ := runJS(t, rt, js, api.Limits{})
		_, inSession := runIn(t, rt, s, js, api.Limits{})
		require.NotNil(t, fresh)
		require.NotNil(t, inSession)
		require.Equal(t, fresh.Message, inSession.Message, js)
		require.Equal(t, fresh.Stack, inSession.Stack, js)
		require.Equal(t, [2]int{fresh.Line, fresh.Column}, [2]int{inSession.Line, inSession.Column}, js)
	}
}

// A program can break its own session (it owns the scope its successors
// are compiled in), never another's.
func TestSession_Run_aProgramBreaksOnlyItsOwnSession(t *testing.T) {
	rt := newRuntime(t, testConfig())
	broken, other := newSession(t, rt), newSession(t, rt)
	requireResult(t, rt, other, `const mine = "other"; return 1`, `1`)
	requireResult(t, rt, broken, `__ptcx_k = () => { throw new Error("hijacked") }; return 1`, `1`)
	_, re := runIn(t, rt, broken, `return 1`, api.Limits{})
	require.NotNil(t, re)
	require.Equal(t, api.KindException, re.Kind)
	require.Contains(t, re.Message, "hijacked")
	requireResult(t, rt, other, `return mine`, `"other"`)
	broken.Reset(context.Background())
	requireResult(t, rt, broken, `return typeof mine`, `"undefined"`)
}
