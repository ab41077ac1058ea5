package workspace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/resolve"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/workspace"
)

// env is a workspace in a temporary directory, its tools registered in a
// registry, and a second directory outside it holding a secret.
type env struct {
	t       *testing.T
	root    string
	outside string
	ws      *workspace.Workspace
	reg     *registry.Registry
}

const secret = "top secret outside the workspace\n"

func newEnv(t *testing.T, opts workspace.Options) *env {
	t.Helper()
	root := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(secret), 0o644))
	ws, err := workspace.New(root, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	reg := registry.New()
	for _, tool := range ws.Tools() {
		require.NoError(t, reg.Register(registry.Deployment, tool), tool.Name)
	}
	return &env{t: t, root: ws.Root(), outside: outside, ws: ws, reg: reg}
}

// file writes a file under the root, creating parents, bypassing the tools.
func (e *env) file(rel, content string) string {
	e.t.Helper()
	p := filepath.Join(e.root, rel)
	require.NoError(e.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(e.t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// link makes a symbolic link at rel (under the root) pointing to dest.
func (e *env) link(dest, rel string) {
	e.t.Helper()
	p := filepath.Join(e.root, rel)
	require.NoError(e.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(e.t, os.Symlink(dest, p))
}

// content reads a file under the root, bypassing the tools.
func (e *env) content(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, rel))
	require.NoError(e.t, err)
	return string(b)
}

// try runs a tool as the executor would: it resolves the tool in the
// registry, validates the arguments against the input schema, runs the
// body, and checks the value against the output schema. It returns the
// first error (INVALID_ARGS, the body's, or INVALID_TOOL_OUTPUT). It is
// safe to call from any goroutine.
func (e *env) try(ctx context.Context, name string, args any) (api.Output, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return api.Output{}, err
	}
	res := resolve.Open(e.reg)(registry.Deployment, name, false)
	if res.Refusal != resolve.Resolved {
		return api.Output{}, fmt.Errorf("tool %q does not resolve: %v", name, res.Refusal)
	}
	parsed, perr := resolve.ParseArgs(raw)
	if perr != nil {
		return api.Output{}, perr
	}
	if verr := res.Definition.ValidateArgs(parsed); verr != nil {
		return api.Output{}, verr
	}
	out, err := res.Definition.Body()(ctx, api.Input{CallID: "test", Scope: registry.Deployment, Args: raw})
	if err != nil {
		return out, err
	}
	if verr := res.Definition.ValidateOutput(out.Value); verr != nil {
		return out, verr
	}
	return out, nil
}

// call is try for the test goroutine: a tool that does not resolve, or an
// output that does not match its schema, fails the test.
func (e *env) call(t *testing.T, ctx context.Context, name string, args any) (api.Output, error) {
	t.Helper()
	out, err := e.try(ctx, name, args)
	require.NotErrorIs(t, err, api.ErrInvalidToolOutput, "output of %s: %s", name, out.Value)
	return out, err
}

// ok runs a tool that must succeed and decodes its value into a T.
func ok[T any](t *testing.T, e *env, name string, args any) T {
	t.Helper()
	out, err := e.call(t, context.Background(), name, args)
	require.NoError(t, err)
	var v T
	require.NoError(t, json.Unmarshal(out.Value, &v))
	return v
}

// fail runs a tool that must fail and returns its error.
func fail(t *testing.T, e *env, name string, args any) error {
	t.Helper()
	_, err := e.call(t, context.Background(), name, args)
	require.Error(t, err, "%s %v should fail", name, args)
	return err
}

type m = map[string]any

// The tools' outputs, as a program sees them.
type (
	readOut struct {
		Path       string `json:"path"`
		Content    string `json:"content"`
		StartLine  int    `json:"start_line"`
		EndLine    int    `json:"end_line"`
		TotalLines int    `json:"total_lines"`
		Truncated  bool   `json:"truncated"`
	}
	writeOut struct {
		Path         string `json:"path"`
		BytesWritten int    `json:"bytes_written"`
		Created      bool   `json:"created"`
	}
	editOut struct {
		Path         string `json:"path"`
		Replacements int    `json:"replacements"`
	}
	listOut struct {
		Path    string `json:"path"`
		Entries []struct {
			Name string `json:"name"`
			Type string `json:"type"`
			Size int64  `json:"size"`
		} `json:"entries"`
		Truncated bool `json:"truncated"`
	}
	globOut struct {
		Matches   []string `json:"matches"`
		Truncated bool     `json:"truncated"`
	}
	grepOut struct {
		Matches []struct {
			Path string `json:"path"`
			Line int    `json:"line"`
			Text string `json:"text"`
		} `json:"matches"`
		Truncated     bool `json:"truncated"`
		FilesSearched int  `json:"files_searched"`
	}
	bashOut struct {
		ExitCode  int    `json:"exit_code"`
		Stdout    string `json:"stdout"`
		Stderr    string `json:"stderr"`
		Truncated bool   `json:"truncated"`
		TimedOut  bool   `json:"timed_out"`
	}
)

func TestNew_badRoot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for name, root := range map[string]string{
		"missing": filepath.Join(dir, "nope"),
		"file":    file,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := workspace.New(root, workspace.Options{})
			require.Error(t, err)
		})
	}
}

func TestNew_resolvesRoot(t *testing.T) {
	real := t.TempDir()
	via := filepath.Join(t.TempDir(), "via")
	require.NoError(t, os.Symlink(real, via))
	ws, err := workspace.New(via+"/./", workspace.Options{})
	require.NoError(t, err)
	defer ws.Close()
	want, err := filepath.EvalSymlinks(real)
	require.NoError(t, err)
	require.Equal(t, want, ws.Root())
	require.True(t, filepath.IsAbs(ws.Root()))

	// An absolute path through the root as given is inside too.
	require.NoError(t, os.WriteFile(filepath.Join(real, "f.txt"), []byte("x"), 0o644))
	for _, tool := range ws.Tools() {
		if tool.Name == "read" {
			out, err := tool.Body(context.Background(), inputOf(t, m{"path": filepath.Join(via, "f.txt")}))
			require.NoError(t, err)
			require.Equal(t, "x", out.Text)
		}
	}
}

func TestTools_set(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  workspace.Options
		tools []string
	}{
		{"default", workspace.Options{}, []string{"read", "write", "edit", "list", "glob", "grep"}},
		{"allow bash", workspace.Options{AllowBash: true}, []string{"read", "write", "edit", "list", "glob", "grep", "bash"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts)
			var names []string
			for _, tool := range e.ws.Tools() {
				names = append(names, tool.Name)
			}
			require.Equal(t, tc.tools, names)
		})
	}
}

func TestTools_schemas(t *testing.T) {
	e := newEnv(t, workspace.Options{AllowBash: true})
	safe := map[string]bool{"read": true, "list": true, "glob": true, "grep": true}
	for _, tool := range e.ws.Tools() {
		t.Run(tool.Name, func(t *testing.T) {
			require.NotEmpty(t, tool.Description)
			require.NotNil(t, tool.Body)
			require.Equal(t, safe[tool.Name], tool.ConcurrencySafe)
			for what, raw := range map[string]json.RawMessage{"input": tool.InputSchema, "output": tool.OutputSchema} {
				var s struct {
					Type                 string `json:"type"`
					AdditionalProperties *bool  `json:"additionalProperties"`
				}
				require.NoError(t, json.Unmarshal(raw, &s), what)
				require.Equal(t, "object", s.Type, what)
				require.NotNil(t, s.AdditionalProperties, what)
				require.False(t, *s.AdditionalProperties, what)
			}
			schema, found := e.reg.Get(registry.Deployment, tool.Name)
			require.True(t, found)
			require.Equal(t, tool.ConcurrencySafe, schema.ConcurrencySafe)
		})
	}
}

func TestTools_unknownArgument(t *testing.T) {
	e := newEnv(t, workspace.Options{AllowBash: true})
	for _, tool := range e.ws.Tools() {
		t.Run(tool.Name, func(t *testing.T) {
			err := fail(t, e, tool.Name, m{"path": "x", "bogus": 1})
			require.ErrorIs(t, err, api.ErrInvalidArgs)
			// A body called directly, without the schema, refuses it too.
			_, err = tool.Body(context.Background(), api.Input{Args: json.RawMessage(`{"bogus": 1}`)})
			require.ErrorIs(t, err, api.ErrInvalidArgs)
		})
	}
}

func TestOptions_defaults(t *testing.T) {
	e := newEnv(t, workspace.Options{AllowBash: true})
	for _, tool := range e.ws.Tools() {
		switch tool.Name {
		case "read":
			require.Contains(t, tool.Description, "256 KiB")
		case "grep", "glob", "list":
			require.Contains(t, tool.Description, "200")
		case "bash":
			require.Contains(t, tool.Description, "30s")
			require.Contains(t, tool.Description, "64 KiB")
		}
	}
}

// inputOf marshals args into a body's input, for calling a Body directly.
func inputOf(t *testing.T, args any) api.Input {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	return api.Input{CallID: "direct", Scope: registry.Deployment, Args: raw}
}
