package executor_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/registry"
)

// pyInSession runs Python code in session name of the deployment.
func pyInSession(e *executor.Executor, name, code string) api.Result {
	return e.Execute(context.Background(), executor.Call{Name: registry.RunCode, Args: runCodeIn("python", code, nil), Session: name})
}

// pyValue is the value of a run_code result.
func pyValue(t *testing.T, r api.Result) string {
	t.Helper()
	require.Nil(t, r.Err)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	return string(v.Result)
}

// A Python session keeps its globals from call to call, through its
// store into another executor (its frame says Python), and refuses a
// TypeScript program with INVALID_ARGS naming both languages (and the
// reverse); nothing runs then and the state stays.
func TestSession_python(t *testing.T) {
	testkit.RequirePython(t)
	store := newFakeSessionStore()
	cfg := executor.NewConfig().WithRuntime(realRuntime(t)).WithSessionStore(store).
		WithLanguages(api.LanguageTypeScript, api.LanguagePython)
	e := newExecutor(t, ptcRegistry(t), cfg)
	t.Cleanup(func() {
		closedOK(t)(e.CloseSession(context.Background(), "", "py"))
		closedOK(t)(e.CloseSession(context.Background(), "", "ts"))
	})

	require.Equal(t, "", pyValue(t, pyInSession(e, "py", "n = 40\ndef more(k): return n + k")))
	require.Equal(t, "42", pyValue(t, pyInSession(e, "py", "more(2)")))

	r := e.Execute(context.Background(), executor.Call{Name: registry.RunCode, Args: runCode("return 1"), Session: "py"})
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeInvalidArgs, r.Err.Code)
	require.Contains(t, r.Err.Message, `session "py" runs Python programs, and this program is TypeScript`)

	fr, _, err := executor.UnframeSession(store.get(registry.Deployment + "/py"))
	require.NoError(t, err)
	require.Equal(t, api.LanguagePython, fr.Language)

	other := newExecutor(t, ptcRegistry(t), cfg)
	t.Cleanup(func() { other.DropSession(context.Background(), "", "py") })
	require.Equal(t, "43", pyValue(t, pyInSession(other, "py", "n += 1\nmore(2)")), "taken over from the store, in Python")

	require.Nil(t, e.Execute(context.Background(), executor.Call{Name: registry.RunCode, Args: runCode("globalThis.k = 1; return 1"), Session: "ts"}).Err)
	r = pyInSession(e, "ts", "1")
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeInvalidArgs, r.Err.Code)
	require.Contains(t, r.Err.Message, `session "ts" runs TypeScript programs, and this program is Python`)
}

// A program of another language than a stored session's frame is refused
// before the state is imported: on a node that runs TypeScript only, a
// Python session's bytes are neither given to a Python guest nor saved
// over by a fresh TypeScript state.
func TestSession_storedOfAnotherLanguageRefusedBeforeImport(t *testing.T) {
	testkit.RequirePython(t)
	store := newFakeSessionStore()
	both := executor.NewConfig().WithRuntime(realRuntime(t)).WithSessionStore(store).
		WithLanguages(api.LanguageTypeScript, api.LanguagePython)
	e := newExecutor(t, ptcRegistry(t), both)
	require.Equal(t, "", pyValue(t, pyInSession(e, "py", "n = 40")))
	e.DropSession(context.Background(), "", "py")
	key := registry.Deployment + "/py"
	saved := append([]byte(nil), store.get(key)...)

	tsOnly := newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(realRuntime(t)).WithSessionStore(store))
	r := tsOnly.Execute(context.Background(), executor.Call{Name: registry.RunCode, Args: runCode("return 1"), Session: "py"})
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeInvalidArgs, r.Err.Code)
	require.Contains(t, r.Err.Message, `session "py" runs Python programs, and this program is TypeScript`)
	require.Equal(t, saved, store.get(key), "the stored Python state is not saved over")

	require.Equal(t, "41", pyValue(t, pyInSession(e, "py", "n + 1")), "the session goes on where Python runs")
	closedOK(t)(e.CloseSession(context.Background(), "", "py"))
}

// A stored state whose guest is not the language its frame names (a
// TypeScript session's state in a Python frame) is not restored: the
// session starts afresh, saying why.
func TestSession_pythonFrameOfAnotherGuest(t *testing.T) {
	testkit.RequirePython(t)
	store := newFakeSessionStore()
	cfg := executor.NewConfig().WithRuntime(realRuntime(t)).WithSessionStore(store).
		WithLanguages(api.LanguageTypeScript, api.LanguagePython)
	e := newExecutor(t, ptcRegistry(t), cfg)
	r := e.Execute(context.Background(), executor.Call{Name: registry.RunCode, Args: runCode("globalThis.n = 1; return n"), Session: "s"})
	require.Nil(t, r.Err)
	e.DropSession(context.Background(), "", "s")
	key := registry.Deployment + "/s"
	fr, state, err := executor.UnframeSession(store.get(key))
	require.NoError(t, err)
	fr.Language = api.LanguagePython
	store.set(key, executor.FrameSession(fr, state))

	r = pyInSession(e, "s", "'n' in globals()")
	require.Nil(t, r.Err)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	require.JSONEq(t, `false`, string(v.Result))
	require.Contains(t, v.Logs[0], "[ptcx] the session's saved state could not be restored, so this program starts afresh: "+
		"its frame says its programs are Python, but its state is the TypeScript guest's")
	closedOK(t)(e.CloseSession(context.Background(), "", "s"))
}

// Python sessions past MaxLivePerScope are suspended to bytes, the least
// recently used first, and resume with their globals.
func TestSession_pythonSuspendedAndResumed(t *testing.T) {
	testkit.RequirePython(t)
	cfg := executor.NewConfig().WithRuntime(realRuntime(t)).WithSessions(executor.SessionLimits{MaxLivePerScope: 1}).
		WithLanguages(api.LanguageTypeScript, api.LanguagePython)
	e := newExecutor(t, ptcRegistry(t), cfg)
	t.Cleanup(func() {
		closedOK(t)(e.CloseSession(context.Background(), "", "a"))
		closedOK(t)(e.CloseSession(context.Background(), "", "b"))
	})
	require.Equal(t, "", pyValue(t, pyInSession(e, "a", "xs = [1, 2]")))
	require.Equal(t, "", pyValue(t, pyInSession(e, "b", "xs = ['b']")))
	states := map[string]string{}
	for _, s := range e.Sessions("") {
		states[s.Name] = s.State.String()
	}
	require.Equal(t, map[string]string{"a": "suspended", "b": "live"}, states)
	require.Equal(t, "3", pyValue(t, pyInSession(e, "a", "sum(xs)")), "resumed from its bytes")
	require.Equal(t, `["b"]`, pyValue(t, pyInSession(e, "b", "xs")))
}
