package wasmhost_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/guest/python"
	"github.com/ptcx/ptcx/wasmhost"
)

// requirePython skips a test without the Python guest (fails in CI), and
// on an engine that refuses Python (ErrPythonEngine, which CheckPython
// reports for it; TestPython_engines checks the refusal).
func requirePython(t testing.TB) {
	t.Helper()
	if err := wasmhost.CheckPython(os.Getenv(wasmhost.EngineEnv)); errors.Is(err, wasmhost.ErrPythonEngine) {
		t.Skipf("skipped: %v", err)
	}
	if python.Wasm() != nil {
		return
	}
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf("the Python guest is required in CI: %v", wasmhost.ErrNoPython)
	}
	t.Skipf("skipped: %v", wasmhost.ErrNoPython)
}

func pyProgram(code string) wasmhost.Program {
	return wasmhost.Program{JS: code, Language: api.LanguagePython, Tools: toolNames}
}

// Python programs run beside TypeScript ones on one Runtime: a result, logs,
// tools called in parallel, failures with their kinds, and the memory floor
// enough for a program.
func TestPython_runs(t *testing.T) {
	requirePython(t)
	rt := newRuntime(t, testConfig())
	ctx := context.Background()
	require.NoError(t, rt.Prepare(ctx, api.LanguagePython))

	out, err := rt.Run(ctx, pyProgram("1 + 1"), &tools{})
	require.NoError(t, err)
	require.JSONEq(t, "2", string(out.Result))

	d := &tools{}
	out, err = rt.Run(ctx, pyProgram("import asyncio\nprint('start')\n"+
		"a, b = await asyncio.gather(tools.echo(i=1), tools.echo({'i': 2}))\n[a['i'], b['i']]"), d)
	require.NoError(t, err)
	require.Equal(t, []string{"start"}, out.Logs)
	require.JSONEq(t, "[1, 2]", string(out.Result))
	require.Len(t, d.seen(), 2)
	require.Equal(t, 2, out.Stats.Calls)

	_, err = rt.Run(ctx, pyProgram("raise ValueError('bad')"), &tools{})
	var re *wasmhost.RunError
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, api.KindException, re.Kind)
	require.Contains(t, re.Message, "ValueError: bad")

	_, err = rt.Run(ctx, pyProgram("def f(:\n  pass"), &tools{})
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, api.KindSyntax, re.Kind)

	p := pyProgram("x = [0] * 1000\nlen(x)")
	p.Limits.MemoryBytes = api.PythonMinMemoryBytes
	out, err = rt.Run(ctx, p, &tools{})
	require.NoError(t, err, "a small program runs at the floor")
	require.JSONEq(t, "1000", string(out.Result))

	out, err = rt.Run(ctx, wasmhost.Program{JS: "return 40 + 2"}, &tools{})
	require.NoError(t, err, "TypeScript runs beside it")
	require.JSONEq(t, "42", string(out.Result))
}

// BenchmarkLanguages_onePlusOne runs `1 + 1` end to end (admission, an
// instance from the pool, the run) in each language on one Runtime;
// python_unrecycled without recycling the Python instances (each run's
// instance restored from the image: what every Python run cost before
// the host owned the guest's open files, wasifs).
func BenchmarkLanguages_onePlusOne(b *testing.B) {
	if python.Wasm() == nil {
		b.Skipf("skipped: %v", wasmhost.ErrNoPython)
	}
	rt := newRuntime(b, testConfig())
	ctx := context.Background()
	require.NoError(b, rt.Prepare(ctx, api.LanguagePython))
	for _, tc := range []struct {
		name string
		p    wasmhost.Program
	}{
		{"typescript", wasmhost.Program{JS: "return 1 + 1"}},
		{"python", wasmhost.Program{JS: "1 + 1", Language: api.LanguagePython}},
		{"python_unrecycled", wasmhost.Program{JS: "1 + 1", Language: api.LanguagePython}},
		{"python_gather2", wasmhost.Program{JS: "import asyncio\na, b = await asyncio.gather(tools.echo(i=1), tools.echo(i=2))\na['i'] + b['i']",
			Language: api.LanguagePython, Tools: toolNames}},
		{"typescript_all2", wasmhost.Program{JS: "const [a, b] = await Promise.all([tools.echo({i: 1}), tools.echo({i: 2})]); return a.i + b.i",
			Tools: toolNames}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			if tc.name == "python_unrecycled" {
				wasmhost.SetPythonRecycles(rt, false)
				defer wasmhost.SetPythonRecycles(rt, true)
			}
			for b.Loop() {
				if _, err := rt.Run(ctx, tc.p, &tools{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
