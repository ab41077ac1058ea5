package workspace_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/workspace"
)

func globEnv(t *testing.T, opts workspace.Options) *env {
	e := newEnv(t, opts)
	for _, f := range []string{
		"main.go", "README.md", "a.go.txt",
		"cmd/tool/main.go", "cmd/tool/main_test.go",
		"internal/x/x.go", "internal/x/deep/y.go",
		".git/config",
	} {
		e.file(f, "package x\n")
	}
	e.link("internal", "linked")              // a directory link inside: not entered
	e.link("main.go", "main-link.go")         // a file link inside: reported
	e.link(e.outside, "out")                  // a directory link outside: never entered
	e.link(e.outside+"/secret.txt", "out.go") // a file link outside: not reported
	return e
}

func TestGlob_patterns(t *testing.T) {
	e := globEnv(t, workspace.Options{})
	for _, tc := range []struct {
		pattern, path string
		want          []string
	}{
		{"**/*.go", "", []string{"cmd/tool/main.go", "cmd/tool/main_test.go", "internal/x/deep/y.go", "internal/x/x.go", "main-link.go", "main.go"}},
		{"*.go", "", []string{"main-link.go", "main.go"}},
		{"cmd/**", "", []string{"cmd/tool/main.go", "cmd/tool/main_test.go"}},
		{"internal/**/*.go", "", []string{"internal/x/deep/y.go", "internal/x/x.go"}},
		{"**/x/*.go", "", []string{"internal/x/x.go"}},
		{"**/*_test.go", "", []string{"cmd/tool/main_test.go"}},
		{"*/*/main.go", "", []string{"cmd/tool/main.go"}},
		{"**/deep/**/*.go", "", []string{"internal/x/deep/y.go"}},
		{"**/**/y.go", "", []string{"internal/x/deep/y.go"}},
		{"*.go", "internal/x", []string{"internal/x/x.go"}},
		{"**/*.go", "linked", []string{"linked/x/deep/y.go", "linked/x/x.go"}},
		{"[A-Z]*", "", []string{"README.md"}},
		{"*.go?txt", "", []string{"a.go.txt"}},
		{".git/*", "", []string{".git/config"}},
		{"./main.go", "", []string{"main.go"}},
		{"nothing*", "", []string{}},
	} {
		t.Run(tc.pattern+" in "+tc.path, func(t *testing.T) {
			args := m{"pattern": tc.pattern}
			if tc.path != "" {
				args["path"] = tc.path
			}
			r := ok[globOut](t, e, "glob", args)
			require.Equal(t, tc.want, r.Matches)
			require.False(t, r.Truncated)
		})
	}
}

func TestGlob_cap(t *testing.T) {
	e := newEnv(t, workspace.Options{MaxMatches: 4})
	for i := range 10 {
		e.file(fmt.Sprintf("d%d/f.txt", i), "")
	}
	r := ok[globOut](t, e, "glob", m{"pattern": "**/*.txt"})
	require.True(t, r.Truncated)
	require.Equal(t, []string{"d0/f.txt", "d1/f.txt", "d2/f.txt", "d3/f.txt"}, r.Matches)
	out, err := e.call(t, context.Background(), "glob", m{"pattern": "**/*.txt"})
	require.NoError(t, err)
	require.Contains(t, out.Text, "[truncated at 4 matches")
}

func TestGlob_badInput(t *testing.T) {
	e := globEnv(t, workspace.Options{})
	for _, tc := range []struct {
		name string
		args m
		kind error
		msg  string
	}{
		{"dotdot", m{"pattern": "../*"}, workspace.ErrEscapes, "escapes the workspace"},
		{"inner dotdot", m{"pattern": "cmd/../../*"}, workspace.ErrEscapes, "escapes the workspace"},
		{"absolute outside", m{"pattern": "/etc/*"}, workspace.ErrEscapes, "escapes the workspace"},
		{"absolute inside", m{"pattern": e.root + "/cmd/*"}, nil, `is absolute: patterns are relative to the searched directory (the workspace root by default), e.g. "cmd/*"`},
		{"malformed", m{"pattern": "src/[a-"}, nil, `invalid glob pattern "src/[a-"`},
		{"empty", m{"pattern": ""}, nil, "is empty"},
		{"path is a file", m{"pattern": "*", "path": "main.go"}, nil, `"main.go" is a file, not a directory`},
		{"path outside", m{"pattern": "*", "path": "out"}, workspace.ErrEscapes, "escapes the workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := fail(t, e, "glob", tc.args)
			if tc.kind != nil {
				require.ErrorIs(t, err, tc.kind)
			}
			require.ErrorContains(t, err, tc.msg)
		})
	}
}
