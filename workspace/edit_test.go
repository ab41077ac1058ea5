package workspace_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/workspace"
)

func TestEdit_replace(t *testing.T) {
	for _, tc := range []struct {
		name string
		args m
		want string
		n    int
	}{
		{"once", m{"old_string": "beta", "new_string": "BETA"}, "alpha\nBETA\ngamma gamma\n", 1},
		{"multi-line", m{"old_string": "alpha\nbeta", "new_string": "ab"}, "ab\ngamma gamma\n", 1},
		{"delete", m{"old_string": "beta\n", "new_string": ""}, "alpha\ngamma gamma\n", 1},
		{"replace all", m{"old_string": "gamma", "new_string": "g", "replace_all": true}, "alpha\nbeta\ng g\n", 2},
		{"replace all of one", m{"old_string": "alpha", "new_string": "a", "replace_all": true}, "a\nbeta\ngamma gamma\n", 1},
		{"grow", m{"old_string": "beta", "new_string": strings.Repeat("b", 100)}, "alpha\n" + strings.Repeat("b", 100) + "\ngamma gamma\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, workspace.Options{})
			e.file("f.txt", "alpha\nbeta\ngamma gamma\n")
			ok[readOut](t, e, "read", m{"path": "f.txt"})
			tc.args["path"] = "f.txt"
			r := ok[editOut](t, e, "edit", tc.args)
			require.Equal(t, editOut{Path: "f.txt", Replacements: tc.n}, r)
			require.Equal(t, tc.want, e.content("f.txt"))
		})
	}
}

func TestEdit_badInput(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	e.file("f.txt", "one two two\n")
	e.file("bin.dat", "a\x00b")
	e.file("dir/x", "")
	ok[readOut](t, e, "read", m{"path": "f.txt"})
	for _, tc := range []struct {
		name string
		args m
		kind error
		msg  string
	}{
		{"absent", m{"path": "f.txt", "old_string": "three", "new_string": "3"}, workspace.ErrNoMatch,
			`old_string was not found in "f.txt": it must match the file's text exactly`},
		{"ambiguous", m{"path": "f.txt", "old_string": "two", "new_string": "2"}, workspace.ErrAmbiguous,
			`old_string occurs 2 times in "f.txt": include more surrounding text to make it unique, or set replace_all to true`},
		{"same", m{"path": "f.txt", "old_string": "one", "new_string": "one"}, nil, "old_string and new_string are the same"},
		{"empty old", m{"path": "f.txt", "old_string": "", "new_string": "x"}, nil, "old_string is empty"},
		{"missing file", m{"path": "nope.txt", "old_string": "a", "new_string": "b"}, fs.ErrNotExist,
			`file "nope.txt" does not exist: edit changes existing files; use write to create it`},
		{"directory", m{"path": "dir", "old_string": "a", "new_string": "b"}, nil, `"dir" is a directory`},
		{"binary", m{"path": "bin.dat", "old_string": "a", "new_string": "b"}, workspace.ErrNotRead, "has not been read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := fail(t, e, "edit", tc.args)
			if tc.kind != nil {
				require.ErrorIs(t, err, tc.kind)
			}
			require.ErrorContains(t, err, tc.msg)
		})
	}
	require.Equal(t, "one two two\n", e.content("f.txt"))
}

// TestEdit_observation: refused before a read, allowed after, refused after
// an external change (even one that keeps the size), allowed after reading
// again.
func TestEdit_observation(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	p := e.file("f.txt", "v1\n")
	edit := m{"path": "f.txt", "old_string": "v", "new_string": "w"}

	require.ErrorIs(t, fail(t, e, "edit", edit), workspace.ErrNotRead)
	ok[readOut](t, e, "read", m{"path": "f.txt"})
	ok[editOut](t, e, "edit", edit)
	require.Equal(t, "w1\n", e.content("f.txt"))

	ok[editOut](t, e, "edit", m{"path": "f.txt", "old_string": "1", "new_string": "2"}) // its own edit counts as read

	externalChange(t, p, "v3\n") // same size, new time
	require.ErrorIs(t, fail(t, e, "edit", edit), workspace.ErrChanged)
	require.Equal(t, "v3\n", e.content("f.txt"))

	ok[readOut](t, e, "read", m{"path": "f.txt"})
	ok[editOut](t, e, "edit", edit)
	require.Equal(t, "w3\n", e.content("f.txt"))
}

func TestEdit_binaryAfterRead(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	p := e.file("f.txt", "text\n")
	ok[readOut](t, e, "read", m{"path": "f.txt"})
	externalChange(t, p, "te\x00t\n")
	// The change is caught first; a binary file can never be read, so it
	// can never be edited.
	require.ErrorIs(t, fail(t, e, "edit", m{"path": "f.txt", "old_string": "t", "new_string": "x"}), workspace.ErrChanged)
	require.ErrorIs(t, fail(t, e, "read", m{"path": "f.txt"}), workspace.ErrBinary)
}

func TestEdit_throughLink(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	e.file("src/real.go", "package a\n")
	e.link(filepath.Join(e.root, "src"), "alias")
	ok[readOut](t, e, "read", m{"path": "src/real.go"})
	out, err := e.call(t, context.Background(), "edit", m{"path": "alias/real.go", "old_string": "package a", "new_string": "package b"})
	require.NoError(t, err)
	require.Equal(t, "edited alias/real.go: replaced 1 occurrence", out.Text)
	require.Equal(t, "package b\n", e.content("src/real.go"))
}
