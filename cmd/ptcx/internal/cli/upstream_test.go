//go:build unix

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

var (
	upstreamOnce sync.Once
	upstreamPath string
	upstreamErr  error
)

// testUpstream is mcpbridge's test MCP server, built once for the package.
func testUpstream(t *testing.T) string {
	t.Helper()
	upstreamOnce.Do(func() {
		dir, err := filepathTemp()
		if err != nil {
			upstreamErr = err
			return
		}
		upstreamPath = filepath.Join(dir, "upstream")
		out, err := exec.Command("go", "build", "-o", upstreamPath, "../../../../mcpbridge/testdata/upstream").CombinedOutput()
		if err != nil {
			upstreamErr = errorf("building the test upstream: %v: %s", err, out)
		}
	})
	require.NoError(t, upstreamErr)
	return upstreamPath
}

func TestUpstream_everyCommand(t *testing.T) {
	bin := testUpstream(t)
	two := []string{"--no-builtin", "--upstream", "a=" + bin, "--upstream", "b=" + bin}
	started := []string{
		`ptcx: upstream "a": bridged 18 tools as a.<tool> (` + bin + ")",
		`ptcx: upstream "b": bridged 18 tools as b.<tool> (` + bin + ")",
		`ptcx: upstream "a": tool "a b" is registered as "a.a_b_2"`,
	}
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  []string // in stdout
	}{
		{"sdk", []string{"sdk"}, "", []string{`"a.upper"(args: AUpperArgs): Promise<AUpperOutput>`, `"b.upper"(args: `,
			"type AUpperOutput = string;"}}, // no output schema: its text
		{"prompt", []string{"prompt", "--mode", "ptc"}, "", []string{`"a.echo"`, `"b.echo"`}},
		{"wire", []string{"wire", "--mode", "both"}, "", []string{`"name": "a.echo"`, `"name": "b.echo"`, "Promise<AUpperOutput>"}},
		{"tools", []string{"tools"}, "", []string{"a.pid", "b.pid"}},
		{"run", []string{"run", "-"}, `const [a, b] = await Promise.all([tools["a.pid"]({}), tools["b.pid"]({})]);
return {two: a.pid !== b.pid, text: await tools["a.upper"]({text: "x"})};`, []string{`"two": true`, `"text": "X"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, status := ptcx(t, tt.stdin, append(tt.args, two...)...)
			require.Equal(t, exitOK, status, errOut)
			for _, line := range started {
				require.Contains(t, errOut, line)
			}
			for _, w := range tt.want {
				require.Contains(t, out, w)
			}
			require.NotContains(t, out, `\u003c`, "JSON output leaves < and > alone")
		})
	}
}

func TestUpstream_samePrefixTwice(t *testing.T) {
	bin := testUpstream(t)
	_, errOut, status := ptcx(t, "", "tools", "--no-builtin", "--upstream", bin, "--upstream", bin)
	require.Equal(t, exitTool, status)
	require.Contains(t, errOut, `is already registered for scope "deployment": give this upstream another prefix (with --upstream NAME=COMMAND)`)
}

// --upstream-trust NAME: the upstream's open-world tools' results are
// trusted; without it they are untrusted (ptcx call --json prints it); a
// name no --upstream has is a usage error.
func TestUpstream_trust(t *testing.T) {
	bin := testUpstream(t)
	out, errOut, status := ptcx(t, "", "call", "--no-builtin", "--upstream", "up="+bin, "up.web", `{"text":"x"}`)
	require.Equal(t, exitOK, status, errOut)
	require.Contains(t, out, `"labels":{"integrity":"untrusted"`)
	out, errOut, status = ptcx(t, "", "call", "--no-builtin", "--upstream", "up="+bin, "--upstream-trust", "up", "up.web", `{"text":"x"}`)
	require.Equal(t, exitOK, status, errOut)
	require.NotContains(t, out, `untrusted`)
	_, errOut, status = ptcx(t, "", "call", "--no-builtin", "--upstream", "up="+bin, "--upstream-trust", "down", "up.web", `{"text":"x"}`)
	require.Equal(t, exitUsage, status)
	require.Contains(t, errOut, `--upstream-trust "down": no --upstream has that name (they are: up)`)
}

func TestUpstream_timeout(t *testing.T) {
	bin := testUpstream(t)
	out, errOut, status := ptcx(t, `return await tools["up.slow"]({seconds: 5});`,
		"run", "--no-builtin", "--upstream", "up="+bin, "--upstream-timeout", "300ms", "-")
	require.Equal(t, exitTool, status, errOut)
	require.Contains(t, out, `upstream "up" did not answer slow within 300ms`)
}

func TestMCP_sdkSentOnce(t *testing.T) {
	tests := []struct {
		name          string
		args          []string
		inDescription bool
	}{
		{"default: the description", nil, true},
		{"description", []string{"--sdk-in", "description"}, true},
		{"instructions", []string{"--sdk-in", "instructions"}, false},
	}
	const decl = "declare const tools"
	ws := t.TempDir()
	out, errOut, status := ptcx(t, "", "prompt", "--mode", "ptc", "--workspace", ws, "--json")
	require.Equal(t, exitOK, status, errOut)
	var sections []struct{ Name, Text string }
	require.NoError(t, json.Unmarshal([]byte(out), &sections))
	require.Len(t, sections, 2)
	sdk := sections[1].Text
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, _ := serveMCP(t, append([]string{"--workspace", ws}, tt.args...)...)
			list, err := cs.ListTools(context.Background(), nil)
			require.NoError(t, err)
			require.Len(t, list.Tools, 1)
			desc := list.Tools[0].Description
			inst := cs.InitializeResult().Instructions
			require.Equal(t, tt.inDescription, strings.Contains(desc, decl), desc)
			require.Equal(t, !tt.inDescription, strings.Contains(inst, decl), inst)
			// The whole tools:sdk section, the rules included, goes one way.
			require.Equal(t, tt.inDescription, strings.Contains(desc, sdk), desc)
			require.Equal(t, !tt.inDescription, strings.Contains(inst, sdk), inst)
			require.Contains(t, inst, "run_code is the only tool you can call directly", "the ptc-only rule stays in the instructions")
		})
	}
}

// With --language python, run_code's description carries Python's SDK
// section (and --sdk-in instructions moves it to the instructions).
func TestMCP_sdkInPython(t *testing.T) {
	ws := t.TempDir()
	out, errOut, status := ptcx(t, "", "prompt", "--mode", "ptc", "--workspace", ws, "--languages", "typescript,python", "--language", "python", "--json")
	require.Equal(t, exitOK, status, errOut)
	var sections []struct{ Name, Text string }
	require.NoError(t, json.Unmarshal([]byte(out), &sections))
	require.Len(t, sections, 3)
	sdk := sections[1].Text
	require.Contains(t, sdk, "class Tools(Protocol):")

	for _, inDescription := range []bool{true, false} {
		args := []string{"--workspace", ws, "--languages", "typescript,python", "--language", "python"}
		if !inDescription {
			args = append(args, "--sdk-in", "instructions")
		}
		cs, _ := serveMCP(t, args...)
		list, err := cs.ListTools(context.Background(), nil)
		require.NoError(t, err)
		desc, inst := list.Tools[0].Description, cs.InitializeResult().Instructions
		require.Equal(t, inDescription, strings.Contains(desc, sdk), desc)
		require.Equal(t, !inDescription, strings.Contains(inst, sdk), inst)
		require.NotContains(t, desc+inst, "declare const tools")
		require.Contains(t, inst, "Promise.all", "the languages section says TypeScript in a line")
	}
}

func TestMCP_builtinAnnotations(t *testing.T) {
	cs, _ := serveMCP(t, "--mode", "both", "--workspace", t.TempDir(), "--allow-bash")
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	got := map[string]*mcp.ToolAnnotations{}
	for _, tool := range list.Tools {
		got[tool.Name] = tool.Annotations
	}
	for _, name := range []string{"read", "list", "glob", "grep"} {
		require.True(t, got[name].ReadOnlyHint, name)
		require.Nil(t, got[name].DestructiveHint, name)
	}
	for _, name := range []string{"write", "edit", "bash"} {
		require.False(t, got[name].ReadOnlyHint, name)
		require.True(t, *got[name].DestructiveHint, name)
	}
	require.Nil(t, got["run_code"])
	b, err := json.Marshal(got["read"])
	require.NoError(t, err)
	require.JSONEq(t, `{"readOnlyHint":true,"idempotentHint":false,"openWorldHint":false}`, string(b))
}

func filepathTemp() (string, error) { return os.MkdirTemp("", "ptcx-cli-upstream-") }

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func TestMCP_upstreamListChangedReachesTheClient(t *testing.T) {
	bin := testUpstream(t)
	changed := make(chan struct{}, 10)
	cs, stderr := serveMCPWith(t, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}, "--mode", "both", "--no-builtin", "--upstream", "up="+bin)
	text, isErr := callTool(t, cs, "up.addtool", map[string]any{"name": "fresh"})
	require.False(t, isErr, text)
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatalf("no notifications/tools/list_changed; stderr: %s", stderr.String())
	}
	require.Contains(t, stderr.String(), `ptcx: upstream "up" changed its tool list: added up.fresh`)
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	require.Contains(t, names, "up.fresh")
	text, isErr = callTool(t, cs, "run_code", map[string]any{
		"description": "the new tool from a program",
		"code":        `return await tools["up.fresh"]({text: "new"});`,
	})
	require.False(t, isErr, text)
	require.Equal(t, "NEW", text)
}
