package ptcx_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx"
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/guest/python"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

func pythonCall(id, code string) ptcx.Call {
	args, _ := json.Marshal(map[string]string{"description": "test", "code": code, "language": "python"})
	return ptcx.Call{ID: id, Name: "run_code", Args: args}
}

func TestWithLanguages_refusals(t *testing.T) {
	for _, tc := range []struct {
		langs []ptcx.Language
		want  string
	}{
		{[]ptcx.Language{}, "ptcx: WithLanguages: no language enabled"},
		{[]ptcx.Language{"cobol"}, `ptcx: WithLanguages: INVALID_ARGS: unknown language "cobol": the languages are typescript and python`},
		{[]ptcx.Language{ptcx.LanguagePython, ptcx.LanguagePython}, "ptcx: WithLanguages: language python is given twice"},
	} {
		h, err := ptcx.New(context.Background(), ptcx.WithCodeRuntime(noSandbox{}), ptcx.WithLanguages(tc.langs...))
		require.Nil(t, h)
		require.ErrorContains(t, err, tc.want)
	}
}

// With Python enabled, run_code's schema offers the languages and the
// prompt says how a Python program is written; a TypeScript-only host
// says neither, and refuses a Python program naming what it runs.
func TestWithLanguages_advertised(t *testing.T) {
	schemaHas := func(h *ptcx.Host) bool {
		s, ok := h.Registry().Get(registry.Deployment, registry.RunCode)
		require.True(t, ok)
		var schema struct{ Properties map[string]json.RawMessage }
		require.NoError(t, json.Unmarshal(s.InputSchema, &schema))
		_, has := schema.Properties["language"]
		return has
	}
	sectionNames := func(h *ptcx.Host) []string {
		sections, err := h.Prompt("")
		require.NoError(t, err)
		var names []string
		for _, s := range sections {
			names = append(names, s.Name)
		}
		return names
	}
	ts := newHost(t, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(addTool))
	require.False(t, schemaHas(ts))
	require.NotContains(t, sectionNames(ts), "tools:languages")
	r := ts.Execute(context.Background(), pythonCall("c1", "1 + 1"))
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeInvalidArgs, r.Err.Code)
	require.Contains(t, r.Err.Message, `language "python" is not one this deployment runs: it runs typescript`)

	both := newHost(t, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(addTool), ptcx.WithLanguages(ptcx.LanguageTypeScript, ptcx.LanguagePython))
	require.True(t, schemaHas(both))
	require.Contains(t, sectionNames(both), "tools:languages")
}

// Without the Python guest in the build, enabling Python fails New,
// saying how to build it.
func TestWithLanguages_pythonNotBuilt(t *testing.T) {
	if python.Wasm() != nil {
		t.Skip("this build has the Python guest")
	}
	h, err := ptcx.New(context.Background(), ptcx.WithLanguages(ptcx.LanguageTypeScript, ptcx.LanguagePython))
	require.Nil(t, h)
	require.ErrorIs(t, err, wasmhost.ErrNoPython)
	require.ErrorContains(t, err, "make guest-python")
}

// The front door runs a Python program against a Func tool: two calls in
// parallel with asyncio.gather, the last expression the result.
func TestWithLanguages_pythonProgram(t *testing.T) {
	testkit.RequirePython(t)
	ctx := context.Background()
	h, err := ptcx.New(ctx, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(addTool), ptcx.WithLanguages(ptcx.LanguageTypeScript, ptcx.LanguagePython))
	require.NoError(t, err)
	defer h.Close(ctx)
	// README.md's example.
	r := h.Execute(ctx, pythonCall("c1", "import asyncio\nprint('adding')\n"+
		"a, b = await asyncio.gather(tools.add(a=1, b=2), tools.add(a=3, b=4))\na + b"))
	require.Nil(t, r.Err)
	var v struct {
		Logs   []string
		Result json.RawMessage
	}
	require.NoError(t, json.Unmarshal(r.Value, &v))
	require.Equal(t, []string{"adding"}, v.Logs)
	require.JSONEq(t, `10`, string(v.Result))
	require.Len(t, r.Ledger.Calls, 2)

	r = h.Execute(ctx, pythonCall("c3", "await tools.add({'a': 3, 'b': 4})"))
	require.Nil(t, r.Err, "one dict is the arguments too")
	require.NoError(t, json.Unmarshal(r.Value, &v))
	require.JSONEq(t, `7`, string(v.Result))

	r = h.Execute(ctx, runCode("c2", "return await tools.add({a: 1, b: 1})"))
	require.Nil(t, r.Err, "TypeScript runs beside it")
}
