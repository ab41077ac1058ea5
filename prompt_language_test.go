package ptcx_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/sdkgen"
)

// promptOf is the host's prompt sections by name.
func promptOf(t *testing.T, h *ptcx.Host) map[string]string {
	t.Helper()
	sections, err := h.Prompt("")
	require.NoError(t, err)
	m := map[string]string{}
	for _, s := range sections {
		m[s.Name] = s.Text
	}
	return m
}

// The prompt declares the tools in the deployment's default language, or in
// the one WithPromptLanguage names; run_code's description follows it.
func TestWithPromptLanguage(t *testing.T) {
	both := ptcx.WithLanguages(ptcx.LanguageTypeScript, ptcx.LanguagePython)
	for _, tc := range []struct {
		name     string
		opts     []ptcx.Option
		python   bool
		sections []string
	}{
		{"typescript only", nil, false, []string{sdkgen.SectionPTCOnly, sdkgen.SectionSDK}},
		{"python only", []ptcx.Option{ptcx.WithLanguages(ptcx.LanguagePython)}, true, []string{sdkgen.SectionPTCOnly, sdkgen.SectionSDK}},
		{"both, default", []ptcx.Option{both}, false, []string{sdkgen.SectionPTCOnly, sdkgen.SectionSDK, sdkgen.SectionLanguages}},
		{"both, python", []ptcx.Option{both, ptcx.WithPromptLanguage(ptcx.LanguagePython)}, true,
			[]string{sdkgen.SectionPTCOnly, sdkgen.SectionSDK, sdkgen.SectionLanguages}},
		{"both, typescript named", []ptcx.Option{both, ptcx.WithPromptLanguage(ptcx.LanguageTypeScript)}, false,
			[]string{sdkgen.SectionPTCOnly, sdkgen.SectionSDK, sdkgen.SectionLanguages}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, append([]ptcx.Option{ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(addTool)}, tc.opts...)...)
			sections, err := h.Prompt("")
			require.NoError(t, err)
			var names []string
			for _, s := range sections {
				names = append(names, s.Name)
			}
			require.Equal(t, tc.sections, names)
			sdk, desc := promptOf(t, h)[sdkgen.SectionSDK], runCodeDescription(t, h.Registry())
			if tc.python {
				require.Contains(t, sdk, "```python\nfrom typing import")
				require.Contains(t, sdk, "    async def add(self, *, a: float, b: float) -> AddOutput: ...")
				require.Contains(t, desc, `"language": "python"`)
				require.Contains(t, desc, "class Tools(Protocol):")
				require.NotContains(t, sdk+desc, "declare const tools")
			} else {
				require.Contains(t, sdk, "```ts\n")
				require.Contains(t, desc, "declare const tools")
				require.NotContains(t, sdk+desc, "class Tools(Protocol):")
			}
		})
	}
}

func TestWithPromptLanguage_refusals(t *testing.T) {
	for _, tc := range []struct {
		opts []ptcx.Option
		want string
	}{
		{[]ptcx.Option{ptcx.WithPromptLanguage(ptcx.LanguagePython)},
			`ptcx: WithPromptLanguage: INVALID_ARGS: the prompt's language "python" is not one this deployment runs: it runs typescript`},
		{[]ptcx.Option{ptcx.WithLanguages(ptcx.LanguagePython), ptcx.WithPromptLanguage(ptcx.LanguageTypeScript)},
			`the prompt's language "typescript" is not one this deployment runs: it runs python`},
		{[]ptcx.Option{ptcx.WithPromptLanguage("cobol")}, `the prompt's language "cobol" is unknown: the languages are typescript and python`},
	} {
		h, err := ptcx.New(context.Background(), append([]ptcx.Option{ptcx.WithCodeRuntime(noSandbox{})}, tc.opts...)...)
		require.Nil(t, h)
		require.ErrorContains(t, err, tc.want)
	}
}

// A description of the caller's own is kept whatever the prompt's language.
func TestWithPromptLanguage_ownDescription(t *testing.T) {
	python := []ptcx.Option{ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(addTool), ptcx.WithLanguages(ptcx.LanguagePython)}
	plain := newHost(t, append(python, ptcx.WithPlainRunCodeDescription())...)
	require.Equal(t, registry.DefaultRunCodeDescription, runCodeDescription(t, plain.Registry()))
	own := newHost(t, append(python, ptcx.WithRunCodeDescriber(func(_, base string, _ []ptcx.Schema) string { return base + " (own)" }))...)
	require.True(t, strings.HasSuffix(runCodeDescription(t, own.Registry()), " (own)"))
}

type bashArgs struct {
	Command string `json:"command"`
}

type readArgs2 struct {
	Path string `json:"path"`
}

// The Python prompt's examples run as written: the run_code call the SDK
// section shows (a model copies it whole), the languages section's
// one-liner, and the rule's way of catching a failed call.
func TestPythonPrompt_examplesRun(t *testing.T) {
	testkit.RequirePython(t)
	ctx := context.Background()
	bash := ptcx.Func("bash", "Run a command.", func(_ context.Context, a bashArgs) (string, error) { return "ran " + a.Command, nil }, ptcx.ConcurrencySafe())
	read := ptcx.Func("read", "Read a file.", func(_ context.Context, a readArgs2) (string, error) {
		if a.Path == "missing" {
			return "", errors.New("no such file")
		}
		return "text of " + a.Path, nil
	}, ptcx.ConcurrencySafe())
	h := newSandboxHost(t, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(bash, read),
		ptcx.WithLanguages(ptcx.LanguageTypeScript, ptcx.LanguagePython), ptcx.WithPromptLanguage(ptcx.LanguagePython))
	run := func(id, args string) json.RawMessage {
		t.Helper()
		r := h.Execute(ctx, ptcx.Call{ID: id, Name: "run_code", Args: json.RawMessage(args)})
		require.Nil(t, r.Err, "%s: %+v", args, r.Err)
		var v struct{ Result json.RawMessage }
		require.NoError(t, json.Unmarshal(r.Value, &v))
		return v.Result
	}

	sdk := promptOf(t, h)[sdkgen.SectionSDK]
	_, example, found := strings.Cut(sdk, "\nrun_code ")
	require.True(t, found, sdk)
	example, _, _ = strings.Cut(example, "\n")
	require.JSONEq(t, `{"status": "ran git status --short", "log": "ran git log --oneline -5"}`, string(run("c1", example)))

	// The TypeScript prompt's Python line (both enabled, TypeScript declared).
	ts := newHost(t, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(bash, read), ptcx.WithLanguages(ptcx.LanguageTypeScript, ptcx.LanguagePython))
	line := promptOf(t, ts)[sdkgen.SectionLanguages]
	_, mapping, found := strings.Cut(line, "Example: `")
	require.True(t, found, line)
	mapping, _, _ = strings.Cut(mapping, "`\n")
	require.JSONEq(t, `26`, string(run("c2", mapping)), "len(\"text of a.txt\") + len(\"text of b.txt\")")

	caught := `{"language": "python", "code": "try:\n    await tools.read(path=\"missing\")\nexcept ToolCallError as e:\n    if e.code != \"TOOL_TIMEOUT\":\n        r = [e.tool, e.code, str(e)]\nr"}`
	require.JSONEq(t, `["read", "TOOL_FAILED", "no such file"]`, string(run("c3", caught)))
}
