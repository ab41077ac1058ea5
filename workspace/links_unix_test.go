//go:build unix

package workspace_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/workspace"
)

const hardLinkMsg = "has 2 hard links; ptcx refuses hard-linked files because a link can point outside the workspace"

// TestTools_hardLinkOutside: a hard link inside the root to a file outside
// it is refused by every tool that reads or writes content, and a directory
// grep skips it.
func TestTools_hardLinkOutside(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	outside := filepath.Join(e.outside, "secret.txt")
	require.NoError(t, os.Link(outside, filepath.Join(e.root, "hl.txt")))
	for tool, args := range map[string]m{
		"read": {"path": "hl.txt"},
		"grep": {"pattern": "secret", "path": "hl.txt"},
	} {
		err := fail(t, e, tool, args)
		require.ErrorIs(t, err, workspace.ErrHardLink, tool)
		require.ErrorContains(t, err, `file "hl.txt" `+hardLinkMsg, tool)
		require.NotContains(t, err.Error(), "top secret", tool)
	}
	r := ok[grepOut](t, e, "grep", m{"pattern": "secret"})
	require.Empty(t, r.Matches)
	require.Zero(t, r.FilesSearched)
	// glob and list name it (they show no content).
	require.Equal(t, []string{"hl.txt"}, ok[globOut](t, e, "glob", m{"pattern": "*"}).Matches)
}

// TestTools_hardLinkInside: a file linked twice inside the root is refused
// as well (a link count cannot tell where the other name is), and write
// and edit refuse it even after it was read, leaving it unchanged.
func TestTools_hardLinkInside(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	a := e.file("a.txt", "alpha\n")
	ok[readOut](t, e, "read", m{"path": "a.txt"})
	require.NoError(t, os.Link(a, filepath.Join(e.root, "b.txt")))
	for _, tc := range []struct {
		tool string
		args m
	}{
		{"read", m{"path": "a.txt"}},
		{"read", m{"path": "b.txt"}},
		{"grep", m{"pattern": "alpha", "path": "b.txt"}},
		{"edit", m{"path": "a.txt", "old_string": "alpha", "new_string": "beta"}},
		{"write", m{"path": "a.txt", "content": "overwritten\n"}},
	} {
		err := fail(t, e, tc.tool, tc.args)
		require.ErrorIs(t, err, workspace.ErrHardLink, tc.tool)
		require.ErrorContains(t, err, hardLinkMsg, tc.tool)
	}
	require.Equal(t, "alpha\n", e.content("a.txt"), "write did not truncate it")

	// Below the bound: once the second name is gone, the file is its own.
	require.NoError(t, os.Remove(filepath.Join(e.root, "b.txt")))
	ok[readOut](t, e, "read", m{"path": "a.txt"})
	ok[editOut](t, e, "edit", m{"path": "a.txt", "old_string": "alpha", "new_string": "beta"})
	require.Equal(t, "beta\n", e.content("a.txt"))
}
