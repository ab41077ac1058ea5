package workspace_test

import (
	"context"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/workspace"
)

func TestList_entries(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	e.file("b.txt", "12345")
	e.file("a/inner.txt", "x")
	e.file(".hidden", "")
	e.link("b.txt", "c-link")
	e.link(e.outside, "d-out") // listed as a link; following it is refused elsewhere
	r := ok[listOut](t, e, "list", m{})
	require.Equal(t, ".", r.Path)
	require.False(t, r.Truncated)
	var got []string
	for _, en := range r.Entries {
		got = append(got, fmt.Sprintf("%s %s %d", en.Name, en.Type, en.Size))
	}
	require.Equal(t, []string{".hidden file 0", "a dir 0", "b.txt file 5", "c-link symlink 0", "d-out symlink 0"}, got)

	out, err := e.call(t, context.Background(), "list", m{"path": "."})
	require.NoError(t, err)
	require.Equal(t, ".hidden (0 bytes)\na/\nb.txt (5 bytes)\nc-link@\nd-out@", out.Text)

	sub := ok[listOut](t, e, "list", m{"path": "a"})
	require.Equal(t, "a", sub.Path)
	require.Len(t, sub.Entries, 1)
}

func TestList_cap(t *testing.T) {
	e := newEnv(t, workspace.Options{MaxMatches: 3})
	for i := range 5 {
		e.file(fmt.Sprintf("f%d", i), "")
	}
	r := ok[listOut](t, e, "list", m{})
	require.True(t, r.Truncated)
	require.Len(t, r.Entries, 3)
	require.Equal(t, "f0", r.Entries[0].Name)
	out, err := e.call(t, context.Background(), "list", m{})
	require.NoError(t, err)
	require.Contains(t, out.Text, "[showing 3 of 5 entries]")
}

func TestList_badInput(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	e.file("f.txt", "")
	e.file("empty/.keep", "")
	require.ErrorContains(t, fail(t, e, "list", m{"path": "f.txt"}), `"f.txt" is a file, not a directory: use read`)
	require.ErrorIs(t, fail(t, e, "list", m{"path": "nope"}), fs.ErrNotExist)
	out, err := e.call(t, context.Background(), "list", m{"path": "empty/.keep/.."})
	require.NoError(t, err)
	require.Equal(t, ".keep (0 bytes)", out.Text)
}
