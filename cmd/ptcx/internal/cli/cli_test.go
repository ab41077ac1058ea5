package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// ptcx runs the CLI in-process.
func ptcx(t *testing.T, stdin string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errb bytes.Buffer
	status = run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), status
}

const toolsFile = "testdata/tools.json"

func decodeCall(t *testing.T, out string) callOutput {
	t.Helper()
	require.Equal(t, 1, strings.Count(out, "\n"), "one JSON object on one line: %q", out)
	var c callOutput
	require.NoError(t, json.Unmarshal([]byte(out), &c), out)
	return c
}

func TestCall(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		stdin    string
		status   int
		code     string
		contains string
	}{
		{"collapsed in ptc", []string{"call", "--tools", toolsFile, "save", `{"key":"a","text":"b"}`}, "", exitTool, "UNKNOWN_TOOL", "only run_code is callable directly"},
		{"unknown", []string{"call", "--tools", toolsFile, "nope"}, "", exitTool, "UNKNOWN_TOOL", `unknown tool "nope"`},
		{"native via flag", []string{"call", "--tools", toolsFile, "--mode", "native", "save", `{"key":"a","text":"b"}`}, "", exitOK, "", `"written": true`},
		{"native via scope", []string{"call", "--tools", toolsFile, "--scope", "native-agent", "lookup", `{"key":"k"}`}, "", exitOK, "", `"key": "k"`},
		{"flags after the name", []string{"call", "lookup", `{"key":"k"}`, "--tools", toolsFile, "--scope", "native-agent"}, "", exitOK, "", `"key": "k"`},
		{"args from stdin", []string{"call", "--tools", toolsFile, "--mode", "both", "lookup", "-"}, `{"key":"from-stdin"}`, exitOK, "", "from-stdin"},
		{"args default to {}", []string{"call", "--tools", toolsFile, "--mode", "native", "lookup"}, "", exitTool, "INVALID_ARGS", "missing property 'key'"},
		{"args not an object", []string{"call", "--tools", toolsFile, "--mode", "native", "lookup", `[1,2]`}, "", exitTool, "INVALID_ARGS", "must be a JSON object, got an array"},
		{"args not JSON", []string{"call", "--tools", toolsFile, "--mode", "native", "lookup", `{key}`}, "", exitTool, "INVALID_ARGS", "not valid JSON"},
		{"collapsed with bad args", []string{"call", "--tools", toolsFile, "save", `[1]`}, "", exitTool, "INVALID_ARGS", "must be a JSON object"},
		{"restricted scope", []string{"call", "--tools", toolsFile, "--scope", "reader", "save", `{"key":"a","text":"b"}`}, "", exitTool, "UNKNOWN_TOOL", `unknown tool "save"`},
		{"command fails", []string{"call", "--tools", toolsFile, "--mode", "native", "fail"}, "", exitTool, "TOOL_FAILED", "no such note"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, status := ptcx(t, tt.stdin, tt.args...)
			require.Equal(t, tt.status, status, "stderr: %s", errOut)
			require.Empty(t, errOut)
			c := decodeCall(t, out)
			require.Equal(t, tt.status == exitOK, c.OK)
			if tt.code != "" {
				require.Equal(t, tt.code, string(c.Error.Code))
				require.Contains(t, c.Error.Message, tt.contains)
				return
			}
			require.Contains(t, c.Text, tt.contains)
			require.True(t, json.Valid(c.Value))
		})
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		contains string
	}{
		{"no command", nil, "usage: ptcx <command>"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"call without name", []string{"call"}, "want a tool NAME"},
		{"call with too many args", []string{"call", "a", "{}", "extra"}, "got 3 arguments"},
		{"unknown flag", []string{"call", "--bogus", "a"}, "flag provided but not defined: -bogus"},
		{"bad mode", []string{"call", "--mode", "turbo", "a"}, `unknown mode "turbo"`},
		{"unknown scope", []string{"call", "--scope", "ghost", "a"}, `--scope: INVALID_DEFINITION: unknown scope "ghost"`},
		{"bad format", []string{"wire", "--format", "xml"}, `unknown --format "xml": want openai, responses or anthropic`},
		{"format case", []string{"wire", "--format", "Responses"}, `unknown --format "Responses"`},
		{"wire positional", []string{"wire", "extra"}, `unexpected argument "extra"`},
		{"help for unknown", []string{"help", "nope"}, `unknown command "nope"`},
		{"bash without builtins", []string{"tools", "--no-builtin", "--allow-bash"}, "cannot go with --no-builtin"},
		{"workspace not a directory", []string{"tools", "--workspace", "/nonexistent/dir"}, "--workspace /nonexistent/dir: not a directory"},
		{"run without a file", []string{"run"}, "want one program FILE"},
		{"run with a bad wall time", []string{"run", "--wall", "-1s", "x.ts"}, "--wall -1s: want a positive duration"},
		{"run with a bad compute time", []string{"run", "--compute", "500us", "x.ts"}, "--compute 500µs: want a positive duration of at least 1ms"},
		{"run with the old --timeout", []string{"run", "--timeout", "1s", "x.ts"}, "flag provided but not defined: -timeout"},
		{"bad upstream quoting", []string{"tools", "--upstream", "fs='unterminated"}, `--upstream "fs='unterminated": unterminated ' quote`},
		{"empty upstream", []string{"sdk", "--upstream", "fs="}, `--upstream "fs=": empty command`},
		{"bad upstream timeout", []string{"wire", "--upstream-timeout", "-1s"}, "--upstream-timeout -1s: want a positive duration"},
		{"bad sdk-in", []string{"mcp", "--sdk-in", "both"}, `--sdk-in "both": want description or instructions`},
		{"prompt in a language not enabled", []string{"prompt", "--language", "python"},
			`--language "python": the prompt's language "python" is not one this deployment runs: it runs typescript (enable it with --languages)`},
		{"prompt in an unknown language", []string{"prompt", "--languages", "python", "--language", "cobol"},
			`--language "cobol": the prompt's language "cobol" is unknown: the languages are typescript and python`},
		{"prompt in typescript, python enabled", []string{"prompt", "--languages", "python", "--language", "typescript"},
			`the prompt's language "typescript" is not one this deployment runs: it runs python`},
		{"mcp in a language not enabled", []string{"mcp", "--language", "python"},
			`--language "python": the prompt's language "python" is not one this deployment runs: it runs typescript (enable it with --languages)`},
		{"bench with no runs", []string{"bench", "--runs", "0"}, "--runs 0: want 1 to 1000"},
		{"bench with too many runs", []string{"bench", "--runs", "1001"}, "--runs 1001: want 1 to 1000"},
		{"bench with too many calls", []string{"bench", "--calls", "10001"}, "--calls 10001: want 1 to 10000"},
		{"bench with negative rounds", []string{"bench", "--rounds", "-1"}, "--rounds -1: want 1 to 20"},
		{"bench with no rounds", []string{"bench", "--runs", "7", "--rounds", "0"}, "--rounds 0: want 1 to 7"},
		{"bench with more rounds than runs", []string{"bench", "--runs", "4", "--rounds", "5"}, "--rounds 5: want 1 to 4"},
		{"bench positional", []string{"bench", "extra"}, `unexpected argument "extra"`},
		{"unknown engine", []string{"run", "--engine", "v8", "x.ts"}, `invalid value "v8" for flag -engine: wasmhost: unknown engine "v8": the engines are wazero and wasmtime`},
		{"bad languages", []string{"tools", "--languages", "typescript,cobol"}, `--languages "typescript,cobol": "cobol" is not a language: the languages are typescript and python`},
		{"a language twice", []string{"sdk", "--languages", "python,python"}, `--languages "python,python": python is given twice`},
		{"run with a bad language", []string{"run", "--language", "cobol", "x.ts"}, `--language "cobol": the languages are typescript and python`},
		{"unknown engine on replay", []string{"replay", "--engine", "v8", "x.jsonl"}, `invalid value "v8" for flag -engine: wasmhost: unknown engine "v8"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, status := ptcx(t, "", tt.args...)
			require.Equal(t, exitUsage, status)
			require.Empty(t, out)
			require.Contains(t, errOut, tt.contains)
			if len(tt.args) == 0 || tt.args[0] == "frobnicate" || tt.args[0] == "help" {
				require.Contains(t, errOut, "usage: ptcx <command>", "a wrong command lists the commands")
				return
			}
			// One line saying what is wrong, one saying where to read
			// more: never the whole flag list.
			lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			require.Len(t, lines, 2, errOut)
			require.Equal(t, "see 'ptcx "+tt.args[0]+" --help'", lines[1])
			require.NotContains(t, errOut, "flags:")
		})
	}
}

func TestHelp_listsTheFlags(t *testing.T) {
	for _, cmd := range []string{"run", "call", "sdk", "prompt", "wire", "tools", "mcp"} {
		t.Run(cmd, func(t *testing.T) {
			out, errOut, status := ptcx(t, "", cmd, "--help")
			require.Equal(t, exitOK, status)
			require.Empty(t, out)
			require.Contains(t, errOut, "usage: ptcx "+cmd)
			require.Contains(t, errOut, "flags:")
			require.Contains(t, errOut, "-upstream [NAME=]COMMAND")
			require.Contains(t, errOut, "-upstream-timeout D")
			require.Contains(t, errOut, "-engine ENGINE")
		})
	}
}

func TestSetupErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"tools":[{"name":"a","command":["x"]},{"name":"a","command":["x"]}]}`), 0o644))
	out, errOut, status := ptcx(t, "", "call", "--tools", bad, "a")
	require.Equal(t, exitTool, status)
	require.Empty(t, out)
	require.Contains(t, errOut, bad)
	require.Contains(t, errOut, `tool "a": INVALID_DEFINITION: tool "a" is already registered`)

	clash := filepath.Join(t.TempDir(), "clash.json")
	require.NoError(t, os.WriteFile(clash, []byte(`[{"name":"read","command":["cat"]}]`), 0o644))
	_, errOut, status = ptcx(t, "", "tools", "--tools", clash)
	require.Equal(t, exitTool, status)
	require.Contains(t, errOut, `tool "read" is already registered`)
	require.Contains(t, errOut, "add --no-builtin")
	_, _, status = ptcx(t, "", "tools", "--tools", clash, "--no-builtin")
	require.Equal(t, exitOK, status)

	_, errOut, status = ptcx(t, "", "tools", "--tools", filepath.Join(t.TempDir(), "missing.json"))
	require.Equal(t, exitTool, status)
	require.Contains(t, errOut, "no such file")
}

func TestHelp(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, status := ptcx(t, "", c.name, "--help")
			require.Equal(t, exitOK, status)
			require.Empty(t, out)
			require.Contains(t, errOut, "usage: ptcx "+c.name)

			out, _, status = ptcx(t, "", "help", c.name)
			require.Equal(t, exitOK, status)
			require.Contains(t, out, "usage: ptcx "+c.name)
		})
	}
	out, _, status := ptcx(t, "", "--help")
	require.Equal(t, exitOK, status)
	for _, c := range commands() {
		require.Contains(t, out, c.name)
	}
}

func TestWire(t *testing.T) {
	out, _, status := ptcx(t, "", "wire", "--tools", toolsFile)
	require.Equal(t, exitOK, status)
	var oa []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &oa))
	require.Len(t, oa, 1)
	require.Equal(t, "function", oa[0]["type"])
	require.Equal(t, "run_code", oa[0]["function"].(map[string]any)["name"])
	// The declarations in run_code's description read as TypeScript.
	require.Contains(t, out, "Promise<")
	require.NotContains(t, out, `\u003c`)
	require.NotContains(t, out, `\u003e`)

	// Responses: flat function tools, what the library's Host.ResponsesTools gives.
	out, _, status = ptcx(t, "", "wire", "--tools", toolsFile, "--mode", "both", "--format", "responses")
	require.Equal(t, exitOK, status)
	var rs []registry.ResponsesTool
	require.NoError(t, json.Unmarshal([]byte(out), &rs))
	require.Len(t, rs, 10)
	for _, tool := range rs {
		require.Equal(t, "function", tool.Type)
		require.NotEmpty(t, tool.Parameters)
	}
	require.Equal(t, "run_code", rs[7].Name)
	require.Contains(t, rs[7].Description, "Promise<")

	out, _, status = ptcx(t, "", "wire", "--tools", toolsFile, "--mode", "both", "--format", "anthropic")
	require.Equal(t, exitOK, status)
	var an []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &an))
	var got []string
	for _, tool := range an {
		got = append(got, tool["name"].(string))
		require.Contains(t, tool, "input_schema")
	}
	require.Equal(t, []string{"edit", "fail", "glob", "grep", "list", "lookup", "read", "run_code", "save", "write"}, got)

	out, _, _ = ptcx(t, "", "wire", "--tools", toolsFile, "--scope", "reader")
	require.Contains(t, out, `"name": "lookup"`)
	require.NotContains(t, out, "run_code")
}

func TestTools(t *testing.T) {
	out, _, status := ptcx(t, "", "tools", "--tools", toolsFile)
	require.Equal(t, exitOK, status)
	require.Contains(t, out, "scope deployment, mode ptc")
	require.Regexp(t, `lookup\s+concurrent\s+1m0s\s+Read a note by key\.`, out)
	require.Regexp(t, `save\s+exclusive\s+5s\s+Write a note\.`, out)
	require.Regexp(t, `run_code\s+exclusive\s+-`, out)

	out, _, status = ptcx(t, "", "tools", "--tools", toolsFile, "--scope", "reader", "--json")
	require.Equal(t, exitOK, status)
	var v struct {
		Scope, Mode string
		Tools       []toolRow
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	require.Equal(t, "reader", v.Scope)
	require.Equal(t, "native", v.Mode)
	require.Len(t, v.Tools, 1)

	out, _, _ = ptcx(t, "", "tools", "--no-builtin")
	require.Contains(t, out, "no tools")

	out, _, _ = ptcx(t, "", "tools", "--workspace", t.TempDir(), "--allow-bash")
	for _, name := range []string{"bash", "edit", "glob", "grep", "list", "read", "write"} {
		require.Regexp(t, `(?m)^`+name+`\s`, out)
	}
}

func TestVersion(t *testing.T) {
	out, _, status := ptcx(t, "", "version")
	require.Equal(t, exitOK, status)
	require.Regexp(t, `^ptcx \S+ \(go1\.\d+`, out)
	require.Regexp(t, `(?m)^tool processes: (cgroup|pid-namespace|process-group|none): \S`, out, "which containment is in force")
	out2, _, _ := ptcx(t, "", "--version")
	require.Equal(t, out, out2)
}

// The contract holds for the built binary too: exit statuses, stdout/stderr.
func TestBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "ptcx")
	build := exec.Command("go", "build", "-o", bin, "../..") // cmd/ptcx, the entry point
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	cmd := exec.Command(bin, "call", "--tools", toolsFile, "save", `{"key":"a","text":"b"}`)
	stdout, err := cmd.Output()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, exitTool, exit.ExitCode())
	require.Equal(t, "UNKNOWN_TOOL", string(decodeCall(t, string(stdout)).Error.Code))

	cmd = exec.Command(bin, "call", "--tools", toolsFile, "--mode", "native", "lookup", "-")
	cmd.Stdin = strings.NewReader(`{"key":"piped"}`)
	stdout, err = cmd.Output()
	require.NoError(t, err)
	require.Contains(t, decodeCall(t, string(stdout)).Text, "piped")

	cmd = exec.Command(bin, "call")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_, err = cmd.Output()
	require.ErrorAs(t, err, &exit)
	require.Equal(t, exitUsage, exit.ExitCode())
	require.Equal(t, "ptcx call: want a tool NAME and optional ARGS_JSON, got 0 arguments\nsee 'ptcx call --help'\n", stderr.String())
}

func TestSDK(t *testing.T) {
	out, errOut, status := ptcx(t, "", "sdk", "--tools", toolsFile)
	require.Equal(t, exitOK, status, errOut)
	require.Contains(t, out, "declare const tools")
	require.Contains(t, out, "lookup(args: LookupArgs)")
	require.Contains(t, out, "key: string")
	require.NotContains(t, out, "run_code")

	restricted, _, _ := ptcx(t, "", "sdk", "--tools", toolsFile, "--scope", "reader")
	require.Contains(t, restricted, "lookup(")
	require.NotContains(t, restricted, "save(")

	again, _, _ := ptcx(t, "", "sdk", "--tools", toolsFile)
	require.Equal(t, out, again, "deterministic")

	_, _, status = ptcx(t, "", "sdk", "--mode", "ptc")
	require.Equal(t, exitUsage, status, "sdk has no --mode")
}

// ptcx sdk --language python prints the Python stub of the same tools;
// typescript is the default, and another language is a usage error.
func TestSDK_python(t *testing.T) {
	out, errOut, status := ptcx(t, "", "sdk", "--tools", toolsFile, "--language", "python")
	require.Equal(t, exitOK, status, errOut)
	require.Contains(t, out, "class Tools(Protocol):")
	require.Contains(t, out, "async def lookup(self, *, key: str")
	require.Contains(t, out, "\ntools: Tools\n")
	require.NotContains(t, out, "def run_code")

	ts, _, _ := ptcx(t, "", "sdk", "--tools", toolsFile, "--language", "typescript")
	def, _, _ := ptcx(t, "", "sdk", "--tools", toolsFile)
	require.Equal(t, def, ts)

	_, errOut, status = ptcx(t, "", "sdk", "--language", "rust")
	require.Equal(t, exitUsage, status)
	require.Contains(t, errOut, `--language "rust": want typescript or python`)
}

func TestPrompt(t *testing.T) {
	out, _, status := ptcx(t, "", "prompt", "--tools", toolsFile)
	require.Equal(t, exitOK, status)
	ptcOnly := strings.Index(out, "<!-- tools:ptc-only -->")
	sdk := strings.Index(out, "<!-- tools:sdk -->")
	require.GreaterOrEqual(t, ptcOnly, 0)
	require.Greater(t, sdk, ptcOnly, "the collapse rule comes first")
	require.Contains(t, out, "run_code is the only tool you can call directly")

	out, _, _ = ptcx(t, "", "prompt", "--tools", toolsFile, "--mode", "both")
	require.NotContains(t, out, "tools:ptc-only")
	require.Contains(t, out, "tools:sdk")

	// Native mode has no sections, and says why on stderr.
	const why = `ptcx prompt: no tool sections: scope "deployment" is in native mode, where the model calls every tool directly from its schema (ptcx wire prints them) and there is no run_code; use --mode ptc or --mode both for the SDK sections`
	out, errOut, status := ptcx(t, "", "prompt", "--tools", toolsFile, "--mode", "native", "--json")
	require.Equal(t, exitOK, status)
	require.JSONEq(t, `[]`, out)
	require.Equal(t, why+"\n", errOut)
	out, errOut, status = ptcx(t, "", "prompt", "--tools", toolsFile, "--mode", "native")
	require.Equal(t, exitOK, status)
	require.Empty(t, out)
	require.Equal(t, why+"\n", errOut)
	_, errOut, _ = ptcx(t, "", "prompt", "--tools", toolsFile)
	require.Empty(t, errOut, "nothing to explain when there are sections")
}

// ptcx prompt --language python declares the tools in Python; the default
// is TypeScript when it is enabled, else the one language enabled.
func TestPrompt_language(t *testing.T) {
	ws := t.TempDir()
	prompt := func(args ...string) map[string]string {
		t.Helper()
		out, errOut, status := ptcx(t, "", append([]string{"prompt", "--mode", "ptc", "--workspace", ws, "--json"}, args...)...)
		require.Equal(t, exitOK, status, errOut)
		var sections []struct{ Name, Text string }
		require.NoError(t, json.Unmarshal([]byte(out), &sections))
		m := map[string]string{}
		for _, sec := range sections {
			m[sec.Name] = sec.Text
		}
		return m
	}
	python := prompt("--languages", "python")
	require.Contains(t, python["tools:sdk"], "```python\nfrom typing import")
	require.Contains(t, python["tools:sdk"], "async def read(")
	require.NotContains(t, python, "tools:languages", "one language: nothing to choose")
	require.Equal(t, python, prompt("--languages", "python", "--language", "python"))

	both := prompt("--languages", "typescript,python")
	require.Contains(t, both["tools:sdk"], "```ts\n")
	require.Contains(t, both["tools:languages"], "asyncio.gather")
	require.Equal(t, both, prompt("--languages", "typescript,python", "--language", "typescript"))

	bothPy := prompt("--languages", "typescript,python", "--language", "python")
	require.Equal(t, python["tools:sdk"], bothPy["tools:sdk"])
	require.Contains(t, bothPy["tools:languages"], "Promise.all")
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.ts")
	require.NoError(t, os.WriteFile(prog, []byte(`const n: number = (await tools.lookup({key: "x"})).key.length;
console.log("looked up");
return {n};`), 0o644))

	out, errOut, status := ptcx(t, "", "run", "--tools", toolsFile, "--no-builtin", prog)
	require.Equal(t, exitOK, status, errOut)
	require.Equal(t, "looked up\nResult:\n{\n  \"n\": 1\n}\n", out)

	out, _, status = ptcx(t, "", "run", "--json", "--tools", toolsFile, "--no-builtin", prog)
	require.Equal(t, exitOK, status)
	c := decodeCall(t, out)
	require.JSONEq(t, `{"logs":["looked up"],"result":{"n":1}}`, string(c.Value))

	out, _, status = ptcx(t, `return 6 * 7`, "run", "--no-builtin", "-")
	require.Equal(t, exitOK, status)
	require.Equal(t, "42\n", out)

	out, _, status = ptcx(t, `throw new Error("boom")`, "run", "--no-builtin", "-")
	require.Equal(t, exitTool, status)
	require.Contains(t, out, "CODE_RUN_FAILED (exception): Error: boom")

	// --wall is limits.wall_ms, --compute limits.timeout_ms.
	out, _, status = ptcx(t, `while (true) {}`, "run", "--no-builtin", "--wall", "300ms", "-")
	require.Equal(t, exitTool, status)
	require.Contains(t, out, "CODE_RUN_FAILED (timeout): ")
	require.Contains(t, out, "wall")
	out, _, status = ptcx(t, `while (true) {}`, "run", "--no-builtin", "--compute", "300ms", "-")
	require.Equal(t, exitTool, status)
	require.Contains(t, out, "CODE_RUN_FAILED (timeout): ")
	require.Contains(t, out, "compute")

	out, _, status = ptcx(t, `const a: ArrayBuffer[] = []; while (true) a.push(new ArrayBuffer(1 << 20));`, "run", "--no-builtin", "--memory", "8", "-")
	require.Equal(t, exitTool, status)
	require.Contains(t, out, "CODE_RUN_FAILED (memory): ")

	out, errOut, status = ptcx(t, `return 1`, "run", "--no-builtin", "--mode", "native", "-")
	require.Equal(t, exitTool, status)
	require.Empty(t, out)
	require.Contains(t, errOut, `scope "deployment" is in native mode (from --mode or the tools file), which has no run_code: add --mode ptc (or both), or set "mode": "ptc" in the tools file`)

	_, errOut, status = ptcx(t, "", "run", filepath.Join(dir, "missing.ts"))
	require.Equal(t, exitTool, status)
	require.Contains(t, errOut, "no such file")
}

func TestCall_runCode(t *testing.T) {
	args := `{"code": "return await tools.lookup({key: 'k'})", "description": "one lookup"}`
	out, errOut, status := ptcx(t, "", "call", "--tools", toolsFile, "--no-builtin", "run_code", args)
	require.Equal(t, exitOK, status, errOut)
	c := decodeCall(t, out)
	require.JSONEq(t, `{"logs":[],"result":{"key":"k"}}`, string(c.Value))
	var withLedger struct{ Ledger api.Ledger }
	require.NoError(t, json.Unmarshal([]byte(out), &withLedger))
	require.Len(t, withLedger.Ledger.Calls, 1, out)
	require.Equal(t, "lookup", withLedger.Ledger.Calls[0].Tool)
	require.Equal(t, 1, withLedger.Ledger.Stats.Calls)

	// description is optional (models often leave it out); code is not.
	out, errOut, status = ptcx(t, "", "call", "--no-builtin", "--mode", "ptc", "run_code", `{"code": "return 1"}`)
	require.Equal(t, exitOK, status, errOut)
	c = decodeCall(t, out)
	require.JSONEq(t, `{"logs":[],"result":1}`, string(c.Value))

	out, _, status = ptcx(t, "", "call", "--no-builtin", "--mode", "ptc", "run_code", `{"description": "d"}`)
	require.Equal(t, exitTool, status)
	c = decodeCall(t, out)
	require.Equal(t, "INVALID_ARGS", string(c.Error.Code))
	require.Contains(t, c.Error.Message, "code")
}

// A first run_code call cancelled while the sandbox starts does not break
// the sandbox for the calls after it (ptcx mcp serves many calls).
func TestLazyRuntime_firstCallCancelled(t *testing.T) {
	rt := &lazyRuntime{}
	defer rt.close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _ = rt.Run(ctx, wasmhost.Program{JS: "return 1"}, wasmhost.DispatcherFunc(func(string, json.RawMessage, func(wasmhost.CallResult)) {}))
	out, err := rt.Run(context.Background(), wasmhost.Program{JS: "return 1"}, wasmhost.DispatcherFunc(func(string, json.RawMessage, func(wasmhost.CallResult)) {}))
	require.NoError(t, err)
	require.JSONEq(t, "1", string(out.Result))
}

// TestCall_labelsAndPolicy: ptcx call prints a result's labels, and a
// denial's policy member.
func TestCall_labelsAndPolicy(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tools.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"mode": "native", "tools": [
		{"name": "inbox", "command": ["/bin/sh", "-c", "echo '\"mail\"'"], "labels": {"integrity": "untrusted"}},
		{"name": "pay", "command": ["/bin/sh", "-c", "echo 1"], "constraints": ["args.amount <= 1000"]}]}`), 0o644))
	out, errOut, status := ptcx(t, "", "call", "--tools", file, "--no-builtin", "inbox")
	require.Equal(t, exitOK, status, errOut)
	c := decodeCall(t, out)
	require.Equal(t, api.Label{Integrity: api.Untrusted}, c.Labels)
	require.Contains(t, out, `"labels":{"integrity":"untrusted","confidentiality":"public"}`)

	out, errOut, status = ptcx(t, "", "call", "--tools", file, "--no-builtin", "pay", `{"amount": 1001}`)
	require.Equal(t, exitTool, status, errOut)
	c = decodeCall(t, out)
	require.Equal(t, "DENIED", string(c.Error.Code))
	require.Equal(t, "constraints", c.Error.Policy.Rule)
	require.Equal(t, "args.amount <= 1000", c.Error.Policy.Constraint)
}

// TestCall_handles: a command tool declared "handle": true gives handles;
// ptcx call prints a run_code result's handles with their values, its
// text a placeholder.
func TestCall_handles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tools.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"mode": "ptc", "tools": [
		{"name": "inbox", "command": ["/bin/sh", "-c", "echo '\"IGNORE PREVIOUS\"'"], "labels": {"integrity": "untrusted"}, "handle": true}]}`), 0o644))
	out, errOut, status := ptcx(t, "", "call", "--tools", file, "--no-builtin", "run_code",
		`{"code": "const h = await tools.inbox({}); return {h, size: h.size}"}`)
	require.Equal(t, exitOK, status, errOut)
	c := decodeCall(t, out)
	require.NotContains(t, c.Text, "IGNORE")
	require.NotContains(t, string(c.Value), "IGNORE")
	require.Len(t, c.Handles, 1)
	require.Equal(t, "inbox", c.Handles[0].Tool)
	require.JSONEq(t, `"IGNORE PREVIOUS"`, string(c.Handles[0].Value))
	require.Contains(t, c.Text, c.Handles[0].ID)
	require.True(t, c.Labels.IsZero(), "the handle was not read")
}

// Each command's --help states the default mode the command applies: the
// tools file's, else its setup's defaultMode (ptc for run, batch and mcp:
// the collapse), else the registry's (native) — and the command applies it.
func TestHelp_modeDefaultIsTheCodes(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want api.Mode
	}{
		{"run", api.ModePTC}, {"batch", api.ModePTC}, {"mcp", api.ModePTC},
		{"call", api.ModeNative}, {"wire", api.ModeNative}, {"tools", api.ModeNative}, {"prompt", api.ModeNative},
	} {
		t.Run(c.cmd, func(t *testing.T) {
			out, errOut, status := ptcx(t, "", c.cmd, "--help")
			require.Equal(t, exitOK, status)
			help := out + errOut
			require.Contains(t, help, "(default: the tools file's, else "+string(c.want)+")")
			other := api.ModeNative
			if c.want == api.ModeNative {
				other = api.ModePTC
			}
			require.NotContains(t, help, "else "+string(other)+")")
		})
	}
	// What the help says is what runs: run_code is advertised with no
	// --mode and no tools file for mcp's default, not for wire's.
	var st setup
	require.Contains(t, modeUsage(st.defaultMode), "else "+string(api.ModeNative))
	out, _, status := ptcx(t, "", "wire", "--no-builtin", "--format", "anthropic")
	require.Equal(t, exitOK, status)
	require.NotContains(t, out, "run_code")
	require.Contains(t, modeUsage(api.ModePTC), "else ptc)")
}

// `ptcx help` gives each command one line (its brief), in name order;
// `ptcx help CMD` its whole summary.
func TestHelp_oneLinePerCommand(t *testing.T) {
	out, _, status := ptcx(t, "", "help")
	require.Equal(t, exitOK, status)
	_, list, ok := strings.Cut(out, "commands:\n")
	require.True(t, ok, out)
	list, _, ok = strings.Cut(list, "\n\n")
	require.True(t, ok, out)
	lines := strings.Split(list, "\n")
	require.Len(t, lines, len(commands()), "one line per command:\n%s", list)
	require.LessOrEqual(t, strings.Count(out, "\n"), len(commands())+10, "ptcx help stays short")
	var names []string
	for _, c := range commands() {
		require.NotEmpty(t, c.brief, c.name)
		require.LessOrEqual(t, len(c.brief), 72, c.name)
		require.NotContains(t, c.brief, "\n", c.name)
		require.False(t, strings.HasSuffix(c.brief, "."), c.name)
		names = append(names, c.name)
	}
	slices.Sort(names)
	for i, line := range lines {
		require.Equal(t, names[i], strings.Fields(line)[0])
		c, _ := lookup(names[i])
		require.True(t, strings.HasSuffix(line, " "+c.brief), line)
	}
	out, _, status = ptcx(t, "", "help", "serve")
	require.Equal(t, exitOK, status)
	require.Contains(t, out, serveCommand.summary)
}
