package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/workspace"
)

func TestWrite_create(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	for _, tc := range []struct{ path, file string }{
		{"new.txt", "new.txt"},
		{"deep/er/new.txt", "deep/er/new.txt"},
		{filepath.Join(e.root, "abs.txt"), "abs.txt"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			w := ok[writeOut](t, e, "write", m{"path": tc.path, "content": "héllo\n"})
			require.Equal(t, writeOut{Path: tc.file, BytesWritten: 7, Created: true}, w)
			require.Equal(t, "héllo\n", e.content(tc.file))
		})
	}
	out, err := e.call(t, context.Background(), "write", m{"path": "text.txt", "content": ""})
	require.NoError(t, err)
	require.Equal(t, "created text.txt (0 bytes)", out.Text)
}

func TestWrite_badInput(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	e.file("dir/x.txt", "x")
	e.file("file.txt", "x")
	for _, tc := range []struct {
		name, path, msg string
	}{
		{"directory", "dir", `"dir" is a directory`},
		{"root", ".", "is the workspace root"},
		{"parent is a file", "file.txt/child.txt", "a component of the path is a file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorContains(t, fail(t, e, "write", m{"path": tc.path, "content": "y"}), tc.msg)
		})
	}
	require.Equal(t, "x", e.content("file.txt"))
}

// TestWrite_observation covers the fs-observation rule for write: an
// existing file is refused until read, allowed after, refused again after
// an external change, allowed after reading again.
func TestWrite_observation(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	p := e.file("f.txt", "original\n")

	err := fail(t, e, "write", m{"path": "f.txt", "content": "mine\n"})
	require.ErrorIs(t, err, workspace.ErrNotRead)
	require.ErrorContains(t, err, `file "f.txt" exists and has not been read in this session: read it first, then edit or write it`)
	require.Equal(t, "original\n", e.content("f.txt"))

	ok[readOut](t, e, "read", m{"path": "f.txt"})
	w := ok[writeOut](t, e, "write", m{"path": "f.txt", "content": "mine\n"})
	require.False(t, w.Created)
	require.Equal(t, "mine\n", e.content("f.txt"))

	// Its own write counts as read: writing again is fine.
	ok[writeOut](t, e, "write", m{"path": "f.txt", "content": "mine again\n"})

	// Someone else changes the file: refused until read again.
	externalChange(t, p, "theirs, longer\n")
	err = fail(t, e, "write", m{"path": "f.txt", "content": "mine\n"})
	require.ErrorIs(t, err, workspace.ErrChanged)
	require.ErrorContains(t, err, `file "f.txt" changed on disk since it was last read`)
	require.ErrorContains(t, err, "read it again")
	require.Equal(t, "theirs, longer\n", e.content("f.txt"))

	ok[readOut](t, e, "read", m{"path": "f.txt", "start_line": 1, "end_line": 1}) // a partial read counts
	ok[writeOut](t, e, "write", m{"path": "f.txt", "content": "mine\n"})
}

func TestWrite_observationFollowsLinks(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	e.file("real.txt", "x\n")
	e.link("real.txt", "alias.txt")
	ok[readOut](t, e, "read", m{"path": "alias.txt"})
	ok[writeOut](t, e, "write", m{"path": "real.txt", "content": "y\n"})
	require.Equal(t, "y\n", e.content("alias.txt"))
}

func TestWrite_sessionsAreSeparate(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	e.file("f.txt", "x\n")
	ok[readOut](t, e, "read", m{"path": "f.txt"})
	other, err := workspace.New(e.root, workspace.Options{})
	require.NoError(t, err)
	defer other.Close()
	for _, tool := range other.Tools() {
		if tool.Name == "write" {
			_, err := tool.Body(context.Background(), inputOf(t, m{"path": "f.txt", "content": "y"}))
			require.ErrorIs(t, err, workspace.ErrNotRead)
		}
	}
}

// externalChange rewrites a file behind the workspace's back, with a
// modification time surely different from before.
func externalChange(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	later := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(path, later, later))
}
