package sdkgen

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

func TestPythonSDKSection_content(t *testing.T) {
	tools := []api.Schema{bashTool(okBash), {Name: "read", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}
	text, err := PythonSDKSection(api.ModePTC, tools)
	require.NoError(t, err)
	require.Contains(t, text, "always pass `\"language\": \"python\"`")
	require.Contains(t, text, "asyncio.gather")
	require.Contains(t, text, `run_code {"language": "python", "code": "import asyncio\nstatus, log = await asyncio.gather(`, "the bash example, in Python")
	decls, err := pythonDeclarations(tools)
	require.NoError(t, err)
	require.Contains(t, text, "```python\n"+decls+"```\n", "the SDK's declarations, whole")
	stub, err := PythonStub(tools)
	require.NoError(t, err)
	require.Equal(t, pyHeader+decls, stub, "the same generator: the stub is its header and the prompt's declarations")
	require.NotContains(t, text, "ptcx_sdk.pyi", "not the stub's header")
	require.NotContains(t, text, "Promise.all")

	text, err = PythonSDKSection(api.ModeBoth, []api.Schema{{Name: "read"}})
	require.NoError(t, err)
	require.NotContains(t, text, "A complete run_code call", "no bash tool, no example")

	text, err = PythonSDKSection(api.ModeNative, []api.Schema{{Name: ""}})
	require.NoError(t, err)
	require.Empty(t, text, "native: no run_code, nothing checked")
	_, err = PythonSDKSection(api.ModePTC, []api.Schema{{Name: ""}})
	require.ErrorContains(t, err, "empty name")
	_, err = PythonSDKSection("collapse", nil)
	require.ErrorContains(t, err, "unknown mode")
}

// The dotted name the rule shows is one Python reaches as a path: "import.x" is not (a keyword).
func TestPythonSDKSection_namespaceRule(t *testing.T) {
	tools := []api.Schema{{Name: "import.x"}, {Name: "fs.read_file"}, {Name: "class.y"}}
	text, err := PythonSDKSection(api.ModePTC, tools)
	require.NoError(t, err)
	require.Contains(t, text, "`tools.fs.read_file(...)` is `tools[\"fs.read_file\"](...)`")
	text, err = PythonSDKSection(api.ModePTC, []api.Schema{{Name: "import.x"}})
	require.NoError(t, err)
	require.NotContains(t, text, "A dotted tool name is also a path")
}

func TestPythonSDKSection_deferred(t *testing.T) {
	var tools []api.Schema
	for i := range DeferTools + 1 {
		tools = append(tools, api.Schema{Name: fmt.Sprintf("tool_%03d", i), Description: "Does a thing."})
	}
	require.True(t, Deferred(tools))
	text, err := PythonSDKSection(api.ModePTC, tools)
	require.NoError(t, err)
	require.Contains(t, text, `tools["$search"]("what it does")`)
	require.Contains(t, text, "```python\n"+pyDeferredDeclarations+"```\n")
	require.Contains(t, text, "- tool_064: Does a thing.\n")
	require.NotContains(t, text, "tools.$search", "TypeScript's spelling")
	require.NotContains(t, text, "class Tool000Args", "no declarations of the tools themselves")

	desc := DescribeRunCodeIn(api.LanguagePython)("", "Run a program.", tools)
	require.Contains(t, desc, `tools["$describe"](name)`)
	require.Contains(t, desc, "- tool_000: Does a thing.\n")
	require.True(t, strings.HasPrefix(desc, "Run a program.\n\nPrograms are Python"))
}
