package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/plan"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// pythonCode is a Python program that esbuild cannot read as TypeScript.
const pythonCode = "def f(x):\n    return x + 1\nf(1)"

func runCodeIn(language, code string, limits map[string]any) json.RawMessage {
	m := map[string]any{"code": code, "language": language}
	if limits != nil {
		m["limits"] = limits
	}
	b, _ := json.Marshal(m)
	return b
}

// programs records the programs a runtime was given.
func programs(t *testing.T) (executor.CodeRuntime, func() []wasmhost.Program) {
	var got []wasmhost.Program
	rt := fakeRuntime(func(_ context.Context, p wasmhost.Program, _ wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		got = append(got, p)
		return wasmhost.Outcome{Result: json.RawMessage("2")}, nil
	})
	return rt, func() []wasmhost.Program { return got }
}

func TestLanguage_defaultIsTypeScript(t *testing.T) {
	rt, got := programs(t)
	e := newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(rt))
	r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("const x: number = 1; return x + 1")})
	require.Nil(t, r.Err)
	require.Len(t, got(), 1)
	require.Equal(t, api.LanguageTypeScript, got()[0].Language)
	require.NotContains(t, got()[0].JS, ": number", "TypeScript is stripped")
	require.Equal(t, []api.Language{api.LanguageTypeScript}, executor.NewConfig().Languages())
}

func TestLanguage_python(t *testing.T) {
	rt, got := programs(t)
	e := newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(rt).WithLanguages(api.LanguageTypeScript, api.LanguagePython))
	r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCodeIn("python", pythonCode, nil)})
	require.Nil(t, r.Err)
	require.Len(t, got(), 1)
	require.Equal(t, api.LanguagePython, got()[0].Language)
	require.Equal(t, pythonCode, got()[0].JS, "Python is given as written: no TypeScript stripping")
	require.Nil(t, got()[0].Suspend, "not suspended where its caller cannot park it")

	r = e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCodeIn("typescript", "return 1", nil)})
	require.Nil(t, r.Err)
	require.Equal(t, api.LanguageTypeScript, got()[1].Language)

	e = newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(resumable{rt}).WithLanguages(api.LanguageTypeScript, api.LanguagePython))
	r, parked := e.ExecuteParkable(context.Background(), executor.Call{Name: "run_code", Args: runCodeIn("python", pythonCode, nil)},
		func(string) bool { return true })
	require.Nil(t, r.Err)
	require.Nil(t, parked)
	require.Equal(t, api.LanguagePython, got()[2].Language)
	require.NotNil(t, got()[2].Suspend, "a Python run may park where its caller could park it")
}

// What a deployment or a Python run cannot have is INVALID_ARGS before any
// program runs, naming what can be.
func TestLanguage_refusals(t *testing.T) {
	ctx := context.Background()
	both := executor.NewConfig().WithLanguages(api.LanguageTypeScript, api.LanguagePython)
	for _, tc := range []struct {
		name string
		cfg  executor.Config
		call executor.Call
		want string
	}{
		{"python not enabled", executor.NewConfig(), executor.Call{Name: "run_code", Args: runCodeIn("python", pythonCode, nil)},
			`language "python" is not one this deployment runs: it runs typescript`},
		{"unknown language", both, executor.Call{Name: "run_code", Args: runCodeIn("cobol", "1", nil)},
			`unknown language "cobol": this deployment runs typescript and python`},
		{"typescript not enabled", executor.NewConfig().WithLanguages(api.LanguagePython), executor.Call{Name: "run_code", Args: runCodeIn("typescript", "return 1", nil)},
			`language "typescript" is not one this deployment runs: it runs python`},
		{"no language where typescript is not enabled", executor.NewConfig().WithLanguages(api.LanguagePython), executor.Call{Name: "run_code", Args: runCode("return 1")},
			`a program without a language is TypeScript, which this deployment does not run: it runs python; give run_code's "language"`},
		{"python below its memory floor", both, executor.Call{Name: "run_code", Args: runCodeIn("python", "1", map[string]any{"memory_mb": 16})},
			"a memory limit of 16 MiB is below the 32 MiB a Python program needs"},
		{"python bound to a plan", both, executor.Call{Name: "run_code", Args: runCodeIn("python", "1", nil), Plan: &plan.Plan{}},
			"plans read TypeScript only, for now"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, got := programs(t)
			e := newExecutor(t, ptcRegistry(t), tc.cfg.WithRuntime(rt))
			r := e.Execute(ctx, tc.call)
			require.Error(t, r.Err)
			require.Equal(t, api.CodeInvalidArgs, r.Err.Code, r.Err.Message)
			require.Contains(t, r.Err.Message, tc.want)
			require.Empty(t, got(), "nothing ran")
		})
	}
}

func TestLanguage_configRefusals(t *testing.T) {
	for _, tc := range []struct {
		langs []api.Language
		want  string
	}{
		{[]api.Language{}, "no language enabled"},
		{[]api.Language{"cobol"}, `unknown language "cobol"`},
		{[]api.Language{api.LanguagePython, "python"}, "language python is given twice"},
	} {
		_, err := executor.New(registry.New(), executor.NewConfig().WithLanguages(tc.langs...))
		require.ErrorContains(t, err, tc.want)
	}
}

// resumable is a runtime that could resume a parked run (it never does).
type resumable struct{ executor.CodeRuntime }

func (resumable) Resume(context.Context, []byte, wasmhost.Dispatcher, wasmhost.Resumption) (wasmhost.Outcome, error) {
	return wasmhost.Outcome{}, errors.New("resumable: not in this test")
}
