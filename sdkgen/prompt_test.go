package sdkgen

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

func bashTool(schema string) api.Schema {
	return api.Schema{Name: "bash", Description: "Run a command.", InputSchema: json.RawMessage(schema)}
}

const okBash = `{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"integer"}},"required":["command"],"additionalProperties":false}`

func sectionNames(sections []Section) []string {
	var names []string
	for _, s := range sections {
		names = append(names, s.Name)
	}
	return names
}

func TestSections_perMode(t *testing.T) {
	tools := []api.Schema{bashTool(okBash), {Name: "read"}}
	tests := []struct {
		mode api.Mode
		want []string
	}{
		{api.ModePTC, []string{SectionPTCOnly, SectionSDK}},
		{api.ModeBoth, []string{SectionSDK}},
		{api.ModeNative, nil},
	}
	for _, tc := range tests {
		t.Run(tc.mode.String(), func(t *testing.T) {
			sections, err := Sections(tc.mode, tools)
			require.NoError(t, err)
			require.Equal(t, tc.want, sectionNames(sections))
			for _, s := range sections {
				require.NotEmpty(t, s.Text)
				require.True(t, strings.HasSuffix(s.Text, "\n"), s.Name)
			}
		})
	}
}

func TestSections_badMode(t *testing.T) {
	for _, mode := range []api.Mode{"", "PTC", "collapse"} {
		_, err := Sections(mode, nil)
		require.ErrorContains(t, err, "unknown mode")
		require.ErrorIs(t, err, api.ErrInvalidDefinition)
		_, err = SDKSection(mode, nil)
		require.ErrorContains(t, err, "unknown mode")
		require.Empty(t, PTCOnlySection(mode), "anything but ptc renders no rule")
	}
}

func TestSections_badTool(t *testing.T) {
	_, err := Sections(api.ModePTC, []api.Schema{{Name: ""}})
	require.ErrorContains(t, err, "empty name")
	sections, err := Sections(api.ModeNative, []api.Schema{{Name: ""}})
	require.NoError(t, err, "native renders no declarations, so there is nothing to fail")
	require.Empty(t, sections)
}

func TestPTCOnlySection_rule(t *testing.T) {
	text := PTCOnlySection(api.ModePTC)
	require.Contains(t, text, "run_code is the only tool you can call directly")
	require.Contains(t, text, "from inside a run_code program")
	require.Empty(t, PTCOnlySection(api.ModeBoth))
	require.Empty(t, PTCOnlySection(api.ModeNative))
}

func TestSDKSection_content(t *testing.T) {
	tools := []api.Schema{{Name: "read", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}
	text, err := SDKSection(api.ModeBoth, tools)
	require.NoError(t, err)
	decls := mustDeclarations(t, tools)
	for _, want := range []string{
		"body of an async function", "types stripped", "exist only inside a program",
		"Only tools whose schemas are listed separately can be called directly", "Promise.all",
		"`await` a call before any call that needs its result", "ToolCallError",
		"Only the returned value and console output reach you",
		"```ts\n" + decls + "```\n",
	} {
		require.Contains(t, text, want)
	}
	require.Less(t, strings.Index(text, "Promise.all"), strings.Index(text, "```ts"), "rules come before the declarations")
}

func TestSDKSection_bashExample(t *testing.T) {
	tests := []struct {
		name  string
		tools []api.Schema
		shown bool
	}{
		{"bash accepts the example", []api.Schema{bashTool(okBash)}, true},
		{"bash with an open schema that declares command", []api.Schema{bashTool(`{"type":"object","properties":{"command":{"type":"string"}}}`)}, true},
		{"no bash", []api.Schema{{Name: "read"}}, false},
		{"a tool merely named like bash", []api.Schema{{Name: "bash2", InputSchema: json.RawMessage(okBash)}}, false},
		{"bash requires an extra field", []api.Schema{bashTool(`{"type":"object","properties":{"command":{"type":"string"},"cwd":{"type":"string"}},"required":["command","cwd"]}`)}, false},
		{"bash forbids command", []api.Schema{bashTool(`{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"],"additionalProperties":false}`)}, false},
		{"bash takes command as an array", []api.Schema{bashTool(`{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}}}`)}, false},
		{"bash does not declare command", []api.Schema{bashTool(`{"type":"object"}`)}, false},
		{"bash uses a keyword the check does not evaluate", []api.Schema{bashTool(`{"type":"object","properties":{"command":{"type":"string","pattern":"^git "}}}`)}, false},
		{"bash accepts nothing", []api.Schema{bashTool(`false`)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, err := SDKSection(api.ModePTC, tc.tools)
			require.NoError(t, err)
			require.Equal(t, tc.shown, strings.Contains(text, "A complete run_code call (the tool name, then its JSON arguments):\nrun_code {"), text)
			require.Equal(t, tc.shown, strings.Contains(text, "tools.bash({command: "), text)
		})
	}
}

func TestSDKSection_bashExampleIsValidJSON(t *testing.T) {
	ex := bashExample([]api.Schema{bashTool(okBash)})
	code := exampleCode(t, ex)
	require.Contains(t, code, "await Promise.all([")
	require.Contains(t, code, "\nreturn {status, log};")
}

func TestSections_deterministic(t *testing.T) {
	tools := loadTools(t, "tools.json")
	first, err := Sections(api.ModePTC, tools)
	require.NoError(t, err)
	for i := 0; i < 100; i++ {
		reversed := make([]api.Schema, len(tools))
		for j, tool := range tools {
			reversed[len(tools)-1-j] = tool
		}
		if i%2 == 0 {
			reversed = tools
		}
		got, err := Sections(api.ModePTC, reversed)
		require.NoError(t, err)
		require.Equal(t, first, got, "render %d", i)
	}
}
