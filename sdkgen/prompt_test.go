package sdkgen

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func bashTool(schema string) Tool {
	return Tool{Name: "bash", Description: "Run a command.", InputSchema: json.RawMessage(schema)}
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
	tools := []Tool{bashTool(okBash), {Name: "read"}}
	tests := []struct {
		mode string
		want []string
	}{
		{ModePTC, []string{SectionPTCOnly, SectionSDK}},
		{ModeBoth, []string{SectionSDK}},
		{ModeNative, nil},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
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
	for _, mode := range []string{"", "PTC", "collapse"} {
		_, err := Sections(mode, nil)
		require.ErrorContains(t, err, "unknown mode")
		_, err = SDKSection(mode, nil)
		require.ErrorContains(t, err, "unknown mode")
		require.Empty(t, PTCOnlySection(mode), "anything but ptc renders no rule")
	}
}

func TestSections_badTool(t *testing.T) {
	_, err := Sections(ModePTC, []Tool{{Name: ""}})
	require.ErrorContains(t, err, "empty name")
	sections, err := Sections(ModeNative, []Tool{{Name: ""}})
	require.NoError(t, err, "native renders no declarations, so there is nothing to fail")
	require.Empty(t, sections)
}

func TestPTCOnlySection_rule(t *testing.T) {
	text := PTCOnlySection(ModePTC)
	require.Contains(t, text, "run_code is the only tool you can call directly")
	require.Contains(t, text, "from inside a run_code program")
	require.Empty(t, PTCOnlySection(ModeBoth))
	require.Empty(t, PTCOnlySection(ModeNative))
}

func TestSDKSection_content(t *testing.T) {
	tools := []Tool{{Name: "read", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}
	text, err := SDKSection(ModeBoth, tools)
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
		tools []Tool
		shown bool
	}{
		{"bash accepts the example", []Tool{bashTool(okBash)}, true},
		{"bash with an open schema that declares command", []Tool{bashTool(`{"type":"object","properties":{"command":{"type":"string"}}}`)}, true},
		{"no bash", []Tool{{Name: "read"}}, false},
		{"a tool merely named like bash", []Tool{{Name: "bash2", InputSchema: json.RawMessage(okBash)}}, false},
		{"bash requires an extra field", []Tool{bashTool(`{"type":"object","properties":{"command":{"type":"string"},"cwd":{"type":"string"}},"required":["command","cwd"]}`)}, false},
		{"bash forbids command", []Tool{bashTool(`{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"],"additionalProperties":false}`)}, false},
		{"bash takes command as an array", []Tool{bashTool(`{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}}}`)}, false},
		{"bash does not declare command", []Tool{bashTool(`{"type":"object"}`)}, false},
		{"bash uses a keyword the check does not evaluate", []Tool{bashTool(`{"type":"object","properties":{"command":{"type":"string","pattern":"^git "}}}`)}, false},
		{"bash accepts nothing", []Tool{bashTool(`false`)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, err := SDKSection(ModePTC, tc.tools)
			require.NoError(t, err)
			require.Equal(t, tc.shown, strings.Contains(text, "A complete run_code call (the tool name, then its JSON arguments):\nrun_code {"), text)
			require.Equal(t, tc.shown, strings.Contains(text, "tools.bash({command: "), text)
		})
	}
}

func TestSDKSection_bashExampleIsValidJSON(t *testing.T) {
	ex := bashExample([]Tool{bashTool(okBash)})
	code := exampleCode(t, ex)
	require.Contains(t, code, "await Promise.all([")
	require.Contains(t, code, "\nreturn {status, log};")
}

func TestSections_deterministic(t *testing.T) {
	tools := loadTools(t, "tools.json")
	first, err := Sections(ModePTC, tools)
	require.NoError(t, err)
	for i := 0; i < 100; i++ {
		reversed := make([]Tool, len(tools))
		for j, tool := range tools {
			reversed[len(tools)-1-j] = tool
		}
		if i%2 == 0 {
			reversed = tools
		}
		got, err := Sections(ModePTC, reversed)
		require.NoError(t, err)
		require.Equal(t, first, got, "render %d", i)
	}
}
