package sdkgen_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/sdkgen"
)

func names(sections []sdkgen.Section) []string {
	var out []string
	for _, s := range sections {
		out = append(out, s.Name)
	}
	return out
}

func TestPromptSections_languages(t *testing.T) {
	ts, py := api.LanguageTypeScript, api.LanguagePython
	both := []api.Language{ts, py}
	tools := []api.Schema{{Name: "read"}}
	for _, tc := range []struct {
		name  string
		mode  api.Mode
		langs []api.Language
		lang  api.Language
		want  []string
		sdk   string // in the SDK section
		other string // in the languages section
	}{
		{"typescript alone", api.ModePTC, nil, "", []string{sdkgen.SectionPTCOnly, sdkgen.SectionSDK}, "```ts", ""},
		{"typescript named", api.ModePTC, []api.Language{ts}, ts, []string{sdkgen.SectionPTCOnly, sdkgen.SectionSDK}, "```ts", ""},
		{"python alone", api.ModePTC, []api.Language{py}, "", []string{sdkgen.SectionPTCOnly, sdkgen.SectionSDK}, "```python", ""},
		{"python alone, both mode", api.ModeBoth, []api.Language{py}, py, []string{sdkgen.SectionSDK}, `pass ` + "`" + `"language": "python"` + "`", ""},
		{"both, default typescript", api.ModeBoth, both, "", []string{sdkgen.SectionSDK, sdkgen.SectionLanguages}, "```ts", "asyncio.gather"},
		{"both, python first", api.ModeBoth, []api.Language{py, ts}, "", []string{sdkgen.SectionSDK, sdkgen.SectionLanguages}, "```ts", "Read the declarations above as Python values"},
		{"both, python asked", api.ModeBoth, both, py, []string{sdkgen.SectionSDK, sdkgen.SectionLanguages}, "```python", "Promise.all"},
		{"native", api.ModeNative, both, py, nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sections, err := sdkgen.PromptSections(tc.mode, tools, tc.langs, tc.lang)
			require.NoError(t, err)
			require.Equal(t, tc.want, names(sections))
			for _, s := range sections {
				switch s.Name {
				case sdkgen.SectionSDK:
					require.Contains(t, s.Text, tc.sdk)
				case sdkgen.SectionLanguages:
					require.Contains(t, s.Text, tc.other)
					require.Contains(t, s.Text, "`\"typescript\"`")
				}
			}
		})
	}
}

func TestPromptLanguage(t *testing.T) {
	ts, py := api.LanguageTypeScript, api.LanguagePython
	for _, tc := range []struct {
		langs []api.Language
		name  string
		want  api.Language
	}{
		{nil, "", ts},
		{nil, "typescript", ts},
		{[]api.Language{py}, "", py},
		{[]api.Language{py, ts}, "", ts},
		{[]api.Language{ts, py}, "python", py},
		{[]api.Language{""}, "", ts},
	} {
		got, err := sdkgen.PromptLanguage(tc.langs, tc.name)
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%v %q", tc.langs, tc.name)
	}
}

func TestPromptLanguage_bad(t *testing.T) {
	for _, tc := range []struct {
		langs []api.Language
		name  string
		want  string
	}{
		{nil, "python", `the prompt's language "python" is not one this deployment runs: it runs typescript`},
		{[]api.Language{api.LanguagePython}, "typescript", `the prompt's language "typescript" is not one this deployment runs: it runs python`},
		{nil, "cobol", `the prompt's language "cobol" is unknown: the languages are typescript and python`},
		{nil, "Python", `the prompt's language "Python" is unknown`},
	} {
		_, err := sdkgen.PromptLanguage(tc.langs, tc.name)
		require.ErrorContains(t, err, tc.want)
		require.ErrorIs(t, err, api.ErrInvalidArgs)
		_, err = sdkgen.PromptSections(api.ModePTC, nil, tc.langs, api.Language(tc.name))
		require.ErrorContains(t, err, tc.want, "PromptSections checks it too")
	}
	_, err := sdkgen.PromptSections("collapse", nil, nil, "")
	require.ErrorContains(t, err, "unknown mode")
}

func TestDescribeRunCodeIn(t *testing.T) {
	tools := []api.Schema{{Name: "read"}}
	ts := sdkgen.DescribeRunCodeIn(api.LanguageTypeScript)("", "Run a program.", tools)
	require.Equal(t, sdkgen.DescribeRunCode("", "Run a program.", tools), ts)
	py := sdkgen.DescribeRunCodeIn(api.LanguagePython)("", "Run a program.", tools)
	require.Contains(t, py, `"language": "python"`)
	require.Contains(t, py, "class Tools(Protocol):")
	require.NotContains(t, py, "declare const tools")
	require.Equal(t, "Run a program.", sdkgen.DescribeRunCodeIn(api.LanguagePython)("", "Run a program.", []api.Schema{{Name: ""}}),
		"tools it cannot declare: the base alone")
}
