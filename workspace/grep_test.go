package workspace_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/workspace"
)

func grepEnv(t *testing.T, opts workspace.Options) *env {
	e := newEnv(t, opts)
	e.file("a.go", "package a\n\nfunc Hello() {}\n")
	e.file("b.txt", "hello world\r\nHELLO again\n")
	e.file("sub/c.go", "// hello from c\n")
	e.file("bin.dat", "hello\x00binary")
	e.file("long.txt", strings.Repeat("é", 1000)+"needle\n")
	e.link(e.outside, "out") // never searched
	return e
}

func TestGrep_matches(t *testing.T) {
	e := grepEnv(t, workspace.Options{})
	type hit = string
	for _, tc := range []struct {
		name string
		args m
		want []hit
	}{
		{"plain", m{"pattern": "hello"}, []hit{"b.txt:1:hello world", "sub/c.go:1:// hello from c"}},
		{"case insensitive", m{"pattern": "hello", "case_insensitive": true},
			[]hit{"a.go:3:func Hello() {}", "b.txt:1:hello world", "b.txt:2:HELLO again", "sub/c.go:1:// hello from c"}},
		{"regexp", m{"pattern": `^func \w+\(`}, []hit{"a.go:3:func Hello() {}"}},
		{"glob by name", m{"pattern": "(?i)hello", "glob": "*.go"}, []hit{"a.go:3:func Hello() {}", "sub/c.go:1:// hello from c"}},
		{"glob by path", m{"pattern": "hello", "glob": "sub/*.go"}, []hit{"sub/c.go:1:// hello from c"}},
		{"in a directory", m{"pattern": "hello", "path": "sub"}, []hit{"sub/c.go:1:// hello from c"}},
		{"in a file", m{"pattern": "o|a", "path": "b.txt"}, []hit{"b.txt:1:hello world", "b.txt:2:HELLO again"}},
		{"none", m{"pattern": "zebra"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ok[grepOut](t, e, "grep", tc.args)
			var got []hit
			for _, mt := range r.Matches {
				got = append(got, fmt.Sprintf("%s:%d:%s", mt.Path, mt.Line, mt.Text))
			}
			require.Equal(t, tc.want, got)
			require.False(t, r.Truncated)
		})
	}
}

func TestGrep_skipsBinaryAndCapsLines(t *testing.T) {
	e := grepEnv(t, workspace.Options{})
	r := ok[grepOut](t, e, "grep", m{"pattern": "binary|needle"})
	require.Len(t, r.Matches, 1, "bin.dat is skipped")
	require.Equal(t, "long.txt", r.Matches[0].Path)
	require.Equal(t, strings.Repeat("é", 300)+"…", r.Matches[0].Text)
	require.Equal(t, 4, r.FilesSearched)

	err := fail(t, e, "grep", m{"pattern": "hello", "path": "bin.dat"})
	require.ErrorIs(t, err, workspace.ErrBinary)
}

func TestGrep_cap(t *testing.T) {
	e := newEnv(t, workspace.Options{MaxMatches: 5})
	e.file("a.txt", strings.Repeat("x\n", 4))
	e.file("b.txt", strings.Repeat("x\n", 4))
	r := ok[grepOut](t, e, "grep", m{"pattern": "x"})
	require.True(t, r.Truncated)
	require.Len(t, r.Matches, 5)
	require.Equal(t, "b.txt", r.Matches[4].Path)
	out, err := e.call(t, context.Background(), "grep", m{"pattern": "x"})
	require.NoError(t, err)
	require.Contains(t, out.Text, "a.txt:1: x\n")
	require.Contains(t, out.Text, "[truncated at 5 matches")

	// Exactly the cap is not truncated.
	r = ok[grepOut](t, e, "grep", m{"pattern": "x", "path": "a.txt"})
	require.False(t, r.Truncated)
}

func TestGrep_badInput(t *testing.T) {
	e := grepEnv(t, workspace.Options{})
	for _, tc := range []struct {
		name string
		args m
		kind error
		msg  string
	}{
		{"bad regexp", m{"pattern": "(unclosed"}, nil, `invalid regular expression "(unclosed": missing closing )`},
		{"lookahead", m{"pattern": "a(?=b)"}, nil, "Go's RE2"},
		{"empty", m{"pattern": ""}, nil, "pattern is empty"},
		{"bad glob", m{"pattern": "x", "glob": "[z-"}, nil, "invalid glob pattern"},
		{"glob out", m{"pattern": "x", "glob": "../*"}, workspace.ErrEscapes, "escapes the workspace"},
		{"missing path", m{"pattern": "x", "path": "nope"}, nil, `"nope" does not exist`},
		{"path outside", m{"pattern": "x", "path": "out"}, workspace.ErrEscapes, "escapes the workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := fail(t, e, "grep", tc.args)
			if tc.kind != nil {
				require.ErrorIs(t, err, tc.kind)
			}
			require.ErrorContains(t, err, tc.msg)
		})
	}
}

func TestGrep_cancelled(t *testing.T) {
	e := grepEnv(t, workspace.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.call(t, ctx, "grep", m{"pattern": "x"})
	require.ErrorIs(t, err, context.Canceled)
}
