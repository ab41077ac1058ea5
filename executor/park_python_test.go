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
	"github.com/ptcx/ptcx/wasmhost"
)

// A Python program parks on a call its caller answers later, as a
// TypeScript one does: its bytes restore in another executor, which
// resumes it with the answer.
func TestExecutor_ExecuteParkable_python(t *testing.T) {
	testkit.RequirePython(t)
	cfg := executor.NewConfig().WithRuntime(realRuntime(t)).WithLanguages(api.LanguageTypeScript, api.LanguagePython)
	w := newParkWorldWith(t, cfg)
	ctx := context.Background()
	code := "before = await tools.add()\nprint('asking')\nok = await tools.approve(what='deploy')\n" +
		"after = await tools.add()\n{'before': before, 'ok': ok, 'after': after}"
	args, _ := json.Marshal(map[string]string{"code": code, "language": "python"})
	res, parked := w.ex.ExecuteParkable(ctx, executor.Call{Name: "run_code", Args: args}, isApprove)
	require.NotNil(t, parked, "not parked: %+v", res)
	require.Equal(t, []executor.ParkedCall{{ID: 2, Tool: "approve", Args: json.RawMessage(`{"what":"deploy"}`), Kind: executor.ParkedTool}}, parked.Calls())
	b, err := parked.Marshal()
	require.NoError(t, err)
	require.True(t, parked.Release(), "its process gives it up (as one that stops would)")

	tsOnly := newParkWorldWith(t, executor.NewConfig().WithRuntime(realRuntime(t)))
	_, err = tsOnly.ex.RestoreParked(b)
	require.ErrorContains(t, err, "its program is Python, which this executor does not run (it runs typescript)")

	other := newParkWorldWith(t, cfg)
	restored, err := other.ex.RestoreParked(b)
	require.NoError(t, err)
	res, again := restored.Resume(ctx, map[int32]executor.Answer{2: {Output: api.Output{Value: json.RawMessage(`"approved by a human"`)}}})
	require.Nil(t, again)
	require.True(t, res.OK(), "%+v", res.Err)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(res.Value, &v))
	require.Equal(t, []string{"asking"}, v.Logs)
	require.JSONEq(t, `{"before": 42, "ok": "approved by a human", "after": 42}`, string(v.Result))
	require.Empty(t, w.ran["approve"]+other.ran["approve"], "approve's body never ran")
}

// A Python program awaiting slow server-side bodies is idle-parked while
// they run, and woken by each answer, as a TypeScript one is.
func TestExecutor_Execute_parkIdle_python(t *testing.T) {
	testkit.RequirePython(t)
	w := newIdleWorld(t, wasmhost.NewConfig())
	ex := w.executor(t, testGrace, nil, executor.NewConfig().WithLanguages(api.LanguageTypeScript, api.LanguagePython))
	args, _ := json.Marshal(map[string]string{"language": "python", "code": `import asyncio
a = asyncio.ensure_future(tools.slow(gate="pa", v=1))
b = asyncio.ensure_future(tools.slow(gate="pb", v=2))
x = await a
print("a answered")
y = await b
[x["v"], y["v"]]`})
	ch := async(func() api.Result {
		return ex.Execute(context.Background(), executor.Call{Name: registry.RunCode, Args: args})
	})
	waitFor(t, "parked with both bodies running", func() bool {
		return ex.IdleParkStats().Parked == 1 && w.bodies("slow") == 2
	})
	require.Zero(t, w.rt.Usage().CommittedBytes)
	w.open("pa")
	waitFor(t, "woken by the first answer, then parked again on the second call", func() bool {
		return ex.IdleParkStats().Parks == 2 && ex.IdleParkStats().Parked == 1
	})
	w.open("pb")
	v := runValue(t, result(t, ch))
	require.JSONEq(t, `[1, 2]`, string(v.Result))
	require.Equal(t, []string{"a answered"}, v.Logs)
	require.Equal(t, 2, w.bodies("slow"), "each body ran once: nothing was dispatched again")
}

// A parked execution whose record says TypeScript but whose snapshot the
// Python guest made (or the reverse) is refused before anything runs: the
// record's language is what the deployment checked, and the bytes must be
// that language's guest's.
func TestExecutor_RestoreParked_snapshotOfAnotherGuest(t *testing.T) {
	testkit.RequirePython(t)
	cfg := executor.NewConfig().WithRuntime(realRuntime(t)).WithLanguages(api.LanguageTypeScript, api.LanguagePython)
	w := newParkWorldWith(t, cfg)
	ctx := context.Background()
	park := func(lang, code string) []byte {
		args, _ := json.Marshal(map[string]string{"code": code, "language": lang})
		res, parked := w.ex.ExecuteParkable(ctx, executor.Call{Name: "run_code", Args: args}, isApprove)
		require.NotNil(t, parked, "not parked: %+v", res)
		require.Equal(t, []executor.ParkedCall{{ID: 1, Tool: "approve", Args: json.RawMessage(`{"what":"deploy"}`), Kind: executor.ParkedTool}}, parked.Calls())
		b, err := parked.Marshal()
		require.NoError(t, err)
		require.True(t, parked.Release())
		return b
	}
	ts := park("typescript", `return await tools.approve({what: "deploy"})`)
	py := park("python", `await tools.approve(what="deploy")`)
	tsHeader, tsSnap := executor.SplitParked(ts)
	pyHeader, pySnap := executor.SplitParked(py)

	other := newParkWorldWith(t, cfg)
	_, err := other.ex.RestoreParked(executor.AssembleParked(tsHeader, pySnap))
	require.ErrorIs(t, err, executor.ErrParkedIncompatible)
	require.ErrorContains(t, err, "its snapshot was made by the Python guest, and its program is TypeScript")
	_, err = other.ex.RestoreParked(executor.AssembleParked(pyHeader, tsSnap))
	require.ErrorContains(t, err, "its snapshot was made by the TypeScript guest, and its program is Python")
	for _, b := range [][]byte{ts, py} {
		p, err := other.ex.RestoreParked(b)
		require.NoError(t, err, "each as it was made")
		require.True(t, p.Release())
	}
}
