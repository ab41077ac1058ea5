package toolsfile_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/toolsfile"
)

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o755))
	return p
}

func load(t *testing.T, content string, mode api.Mode) (*executor.Executor, string) {
	t.Helper()
	dir := t.TempDir()
	p := write(t, dir, "tools.json", content)
	f, err := toolsfile.Load(p)
	require.NoError(t, err)
	reg := registry.New()
	require.NoError(t, f.Apply(reg, mode))
	e, err := executor.New(reg, executor.NewConfig())
	require.NoError(t, err)
	return e, dir
}

func TestLoad_badFiles(t *testing.T) {
	tests := []struct {
		name, content, contains string
	}{
		{"empty", ``, "empty file"},
		{"not JSON", `{"tools": [}`, "not valid JSON at line 1, column 12"},
		{"unknown field", `{"tools": [], "tool": []}`, `unknown field "tool"`},
		{"unknown tool field", `{"tools": [{"name":"a","command":["x"],"cmd":"x"}]}`, `tool 1 ("a"): unknown member "cmd"`},
		{"bad label", `{"tools": [{"name":"a","command":["x"],"labels":{"integrity":"shady"}}]}`, `tool 1 ("a"): labels: integrity "shady" is not one of trusted, untrusted`},
		{"unknown label member", `{"tools": [{"name":"a","command":["x"],"labels":{"trust":"low"}}]}`, `tool 1 ("a"): labels: a label has only the members integrity and confidentiality, not "trust"`},
		{"bad accepts", `{"tools": [{"name":"a","command":["x"],"accepts":{"args":{"to":{"integrity":"x"}}}}]}`, `tool 1 ("a"): accepts.args.to: integrity "x"`},
		{"bad on_violation", `{"tools": [{"name":"a","command":["x"],"accepts":{"on_violation":"log"}}]}`, `tool 1 ("a"): accepts.on_violation "log"`},
		{"CEL that does not compile", `{"tools": [{"name":"a","command":["x"],"constraints":["args.amount <"]}]}`, `tool 1 ("a"): constraints[0] "args.amount <": does not compile`},
		{"CEL not a condition", `{"tools": [{"name":"a","command":["x"],"constraints":["args.amount"]}, {"name":"b","command":["x"],"constraints":["1 + 2"]}]}`, `tool 2 ("b"): constraints[0] "1 + 2": is of type int, not bool`},
		{"negative calls_per_run", `{"tools": [{"name":"a","command":["x"],"calls_per_run":-1}]}`, `tool 1 ("a"): calls_per_run: -1 is negative`},
		{"needs_approval not a boolean", `{"tools": [{"name":"a","command":["x"],"needs_approval":"yes"}]}`, `tool 1 ("a"): needs_approval: cannot unmarshal string`},
		{"needs_approval null", `{"tools": [{"name":"a","command":["x"],"needs_approval":null}]}`, `tool 1 ("a"): needs_approval: null is not a value here`},
		{"needs_approval misspelt", `{"tools": [{"name":"a","command":["x"],"needs_approvals":true}]}`, `tool 1 ("a"): unknown member "needs_approvals"`},
		{"bad reply", `{"tools": [{"name":"a","command":["x"],"reply":"json"}]}`, `tool 1 ("a"): reply "json" is not "value" or "envelope"`},
		{"missing name", `{"tools": [{"command":["x"]}]}`, `tool 1 (""): missing "name"`},
		{"missing command", `{"tools": [{"name":"a"}]}`, `tool 1 ("a"): missing "command"`},
		{"command not argv", `{"tools": [{"name":"a","command":"ls -l"}]}`, "cannot unmarshal string"},
		{"negative timeout", `{"tools": [{"name":"a","command":["x"],"timeout_ms":-5}]}`, "negative"},
		{"timeout past the maximum", `{"tools": [{"name":"a","command":["x"],"timeout_ms":86400001}]}`, "over the maximum of 86400000"},
		{"timeout that would overflow", `{"tools": [{"name":"a","command":["x"],"timeout_ms":9223372036854775807}]}`, "over the maximum"},
		{"bad mode", `{"mode":"turbo","tools":[]}`, `unknown mode "turbo"`},
		{"trailing data", `{"tools": []} {}`, "unexpected data"},
		{"unknown env field", `{"tools": [{"name":"a","command":["x"],"env":{"passs":["HOME"]}}]}`, `unknown field "passs"`},
		{"env pass not a name", `{"tools": [{"name":"a","command":["x"],"env":{"pass":["HOME","A=B"]}}]}`, `env.pass[1] "A=B" is not a variable name`},
		{"env pass empty name", `{"tools": [{"name":"a","command":["x"],"env":{"pass":[""]}}]}`, `env.pass[0] "" is not a variable name`},
		{"env set not a name", `{"tools": [{"name":"a","command":["x"],"env":{"set":{"1X":"v"}}}]}`, `env.set "1X" is not a variable name`},
		{"env set NUL", `{"tools": [{"name":"a","command":["x"],"env":{"set":{"X":"a\u0000b"}}}]}`, `env.set "X": the value holds a NUL byte`},
		{"env set not a string", `{"tools": [{"name":"a","command":["x"],"env":{"set":{"X":1}}}]}`, "cannot unmarshal number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := write(t, t.TempDir(), "tools.json", tt.content)
			_, err := toolsfile.Load(p)
			require.Error(t, err)
			require.Contains(t, err.Error(), p, "the error names the file")
			require.Contains(t, err.Error(), tt.contains)
		})
	}
	_, err := toolsfile.Load(filepath.Join(t.TempDir(), "missing.json"))
	require.ErrorContains(t, err, "no such file")
}

func TestApply_badDefinitions(t *testing.T) {
	tests := []struct {
		name, content, contains string
	}{
		{"duplicate", `[{"name":"a","command":["x"]},{"name":"a","command":["x"]}]`, `tool "a": INVALID_DEFINITION: tool "a" is already registered`},
		{"reserved", `[{"name":"run_code","command":["x"]}]`, `tool "run_code": INVALID_DEFINITION: "run_code" is reserved`},
		{"bad name", `[{"name":"a b","command":["x"]}]`, `invalid tool name "a b"`},
		{"invalid schema", `[{"name":"a","command":["x"],"input_schema":{"type":"object","properties":{"x":{"type":"nope"}}}}]`, `tool "a": UNSUPPORTED_SCHEMA`},
		{"schema not object", `[{"name":"a","command":["x"],"input_schema":{"type":"array"}}]`, `"type": "object"`},
		{"unknown scope", `{"tools":[{"name":"a","command":["x"],"scope":"ghost"}]}`, `unknown scope "ghost"`},
		{"second mode", `{"scopes":[{"name":"s","mode":"ptc"},{"name":"s","mode":"both"}],"tools":[]}`, `scope "s": INVALID_DEFINITION: scope "s" already exists`},
		{"restrict run_code", `{"scopes":[{"name":"s","deny":["run_code"]}],"tools":[]}`, "run_code cannot be restricted"},
		{"restrict unknown", `{"scopes":[{"name":"s","allow":["nope"]}],"tools":[]}`, `restriction names "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := write(t, t.TempDir(), "tools.json", tt.content)
			f, err := toolsfile.Load(p)
			require.NoError(t, err)
			err = f.Apply(registry.New(), "")
			require.Error(t, err)
			require.Contains(t, err.Error(), p)
			require.Contains(t, err.Error(), tt.contains)
		})
	}
}

func TestLoad_timeoutAtTheMaximum(t *testing.T) {
	p := write(t, t.TempDir(), "tools.json", `[{"name":"a","command":["x"],"timeout_ms":86400000}]`)
	f, err := toolsfile.Load(p)
	require.NoError(t, err)
	reg := registry.New()
	require.NoError(t, f.Apply(reg, ""))
	s, ok := reg.Get(registry.Deployment, "a")
	require.True(t, ok)
	require.Equal(t, toolsfile.MaxTimeout, s.Timeout)
}

// An empty allow list is a restriction too: the scope inherits nothing.
func TestApply_emptyAllowList(t *testing.T) {
	e, _ := load(t, `{"scopes": [{"name": "bare", "allow": []}], "tools": [{"name": "a", "command": ["cat"]}]}`, "")
	ss, err := e.Registry().Bindable("bare")
	require.NoError(t, err)
	require.Empty(t, ss)
}

func TestApply_modesAndScopes(t *testing.T) {
	e, _ := load(t, `{
		"mode": "both",
		"scopes": [
			{"name": "coder", "mode": "ptc"},
			{"name": "agent", "parent": "coder", "deny": ["b"]}
		],
		"tools": [
			{"name": "a", "command": ["cat"], "concurrency_safe": true},
			{"name": "b", "command": ["cat"]},
			{"name": "own", "command": ["cat"], "scope": "agent"}
		]
	}`, "")
	reg := e.Registry()
	m, _ := reg.Mode(registry.Deployment)
	require.Equal(t, api.ModeBoth, m)
	m, _ = reg.Mode("agent")
	require.Equal(t, api.ModePTC, m)
	ss, err := reg.Bindable("agent")
	require.NoError(t, err)
	require.Len(t, ss, 2)
	require.Equal(t, "a", ss[0].Name)
	require.True(t, ss[0].ConcurrencySafe)
	require.Equal(t, toolsfile.DefaultTimeout, ss[0].Timeout)
	require.Equal(t, "own", ss[1].Name)

	// --mode overrides the file's mode.
	e2, _ := load(t, `{"mode":"both","tools":[{"name":"a","command":["cat"]}]}`, api.ModeNative)
	m, _ = e2.Registry().Mode(registry.Deployment)
	require.Equal(t, api.ModeNative, m)
}

func TestCommand_roundTrip(t *testing.T) {
	e, dir := load(t, `[
		{"name": "echo", "command": ["cat"], "input_schema": {"type":"object","properties":{"x":{"type":"integer"}}}},
		{"name": "script", "command": ["./tool.sh", "hello"]},
		{"name": "silent", "command": ["true"]}
	]`, "")
	write(t, dir, "tool.sh", "#!/bin/sh\nprintf '{\"arg\":\"%s\",\"pwd\":\"%s\"}' \"$1\" \"$(pwd)\"\n")

	r := e.Execute(context.Background(), executor.Call{Name: "echo", Args: json.RawMessage(`{"x": 7}`)})
	require.True(t, r.OK(), r.Text)
	require.JSONEq(t, `{"x":7}`, string(r.Value))

	r = e.Execute(context.Background(), executor.Call{Name: "script"})
	require.True(t, r.OK(), r.Text)
	var got struct{ Arg, Pwd string }
	require.NoError(t, json.Unmarshal(r.Value, &got))
	require.Equal(t, "hello", got.Arg)
	real, _ := filepath.EvalSymlinks(dir)
	gotPwd, _ := filepath.EvalSymlinks(got.Pwd)
	require.Equal(t, real, gotPwd, "a command runs in the tools file's directory")

	r = e.Execute(context.Background(), executor.Call{Name: "silent"})
	require.True(t, r.OK(), r.Text)
	require.JSONEq(t, `null`, string(r.Value))
}

func TestCommand_failures(t *testing.T) {
	long := strings.Repeat("x", 5000)
	tests := []struct {
		name, command string
		timeoutMS     int
		code          api.Code
		contains      string
	}{
		{"non-zero exit with stderr", `echo "  city not found  " >&2; exit 3`, 0, api.CodeToolFailed, "city not found"},
		{"non-zero exit without stderr", `exit 4`, 0, api.CodeToolFailed, "exited with status 4"},
		{"killed by a signal", `kill -TERM $$`, 0, api.CodeToolFailed, "killed by signal terminated"},
		{"stderr capped", `printf '` + long + `' >&2; exit 1`, 0, api.CodeToolFailed, "more bytes)"},
		{"not JSON", `echo 'hello world'`, 0, api.CodeInvalidToolOutput, "not JSON"},
		{"two JSON values", `echo '{} {}'`, 0, api.CodeInvalidToolOutput, "not JSON"},
		{"hangs", `sleep 300`, 100, api.CodeToolTimeout, "within its timeout of 100ms"},
		{"floods stdout", `yes '"y"'`, 0, api.CodeToolFailed, "printed more than 1048576 bytes on stdout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := map[string]any{"name": "t", "command": []string{"/bin/sh", "-c", tt.command}}
			if tt.timeoutMS > 0 {
				spec["timeout_ms"] = tt.timeoutMS
			}
			b, _ := json.Marshal([]any{spec})
			e, _ := load(t, string(b), "")
			start := time.Now()
			r := e.Execute(context.Background(), executor.Call{Name: "t"})
			require.Less(t, time.Since(start), 10*time.Second)
			require.NotNil(t, r.Err)
			require.Equal(t, tt.code, r.Err.Code, r.Text)
			require.Contains(t, r.Err.Message, tt.contains)
			require.Less(t, len(r.Err.Message), 3000, "messages are capped")
		})
	}
}

func TestCommand_startFailure(t *testing.T) {
	e, _ := load(t, `[{"name":"t","command":["./does-not-exist"]}]`, "")
	r := e.Execute(context.Background(), executor.Call{Name: "t"})
	require.Equal(t, api.CodeToolFailed, r.Err.Code)
	require.Contains(t, r.Err.Message, "cannot start")
	require.Contains(t, r.Err.Message, "no such file")
}

// TestToolSpec_JSON_roundTripsItsPolicy: a tool's policy members are
// written beside its others and read back the same.
func TestToolSpec_JSON_roundTripsItsPolicy(t *testing.T) {
	in := `{"name":"send","command":["x"],"labels":{"integrity":"trusted","confidentiality":"private"},` +
		`"accepts":{"args":{"to":{"integrity":"trusted"}},"on_violation":"ask"},"constraints":["args.n < 3"],"calls_per_run":2,"cost":1,"max_cost":4,"needs_approval":true}`
	f, err := toolsfile.Parse([]byte("[" + in + "]"))
	require.NoError(t, err)
	out, err := json.Marshal(f.Tools[0])
	require.NoError(t, err)
	g, err := toolsfile.Parse([]byte("[" + string(out) + "]"))
	require.NoError(t, err)
	require.Equal(t, f.Tools[0], g.Tools[0])
	require.Equal(t, 2, g.Tools[0].Policy.CallsPerRun)
	require.True(t, g.Tools[0].Policy.NeedsApproval)
	require.Contains(t, string(out), `"needs_approval":true`)
}
