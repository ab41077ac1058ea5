//go:build unix

package workspace_test

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/workspace"
)

// TestRead_fifo: a named pipe is refused at once, never read (which would
// block until a writer came).
func TestRead_fifo(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	require.NoError(t, syscall.Mkfifo(filepath.Join(e.root, "fifo"), 0o644))
	for tool, args := range map[string]m{
		"read":  {"path": "fifo"},
		"write": {"path": "fifo", "content": "x"},
		"edit":  {"path": "fifo", "old_string": "a", "new_string": "b"},
		"grep":  {"pattern": "x", "path": "fifo"},
	} {
		require.ErrorContains(t, fail(t, e, tool, args), "not a regular file", tool)
	}
	r := ok[grepOut](t, e, "grep", m{"pattern": "x"}) // a directory search skips it
	require.Zero(t, r.FilesSearched)
}
