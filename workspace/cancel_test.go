package workspace_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/workspace"
)

// hugeLine makes rel a sparse file of one 64 GiB line: 16 KiB of text (so
// it is not taken for binary), then a hole, which reads as NUL bytes.
// Reading it to its end takes minutes; it takes no disk space.
func (e *env) hugeLine(rel string) {
	e.t.Helper()
	p := e.file(rel, strings.Repeat("needle ", 16<<10/7))
	require.NoError(e.t, os.Truncate(p, 64<<30))
}

// TestTools_cancelled: a tool body stops promptly when its context is
// cancelled in the middle of its work, inside one huge line or a walk over
// many files, and leaves no goroutine behind.
func TestTools_cancelled(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(e *env)
		tool  string
		args  m
	}{
		{"grep a huge line", func(e *env) { e.hugeLine("huge.txt") }, "grep", m{"pattern": "x", "path": "huge.txt"}},
		{"read past a huge line", func(e *env) { e.hugeLine("huge.txt") }, "read", m{"path": "huge.txt", "start_line": 2}},
		{"grep a tree", func(e *env) {
			for i := range 2000 {
				e.file(fmt.Sprintf("d%02d/f%03d.txt", i%20, i), "haystack\n")
			}
			e.hugeLine("zz/huge.txt")
		}, "grep", m{"pattern": "needle"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, workspace.Options{})
			tc.setup(e)
			before := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := e.body(t, tc.tool)(ctx, inputOf(t, tc.args))
				done <- err
			}()
			time.Sleep(300 * time.Millisecond) // well into the work, which takes minutes
			select {
			case err := <-done:
				t.Fatalf("%s finished before it was cancelled: %v", tc.tool, err)
			default:
			}
			cancel()
			select {
			case err := <-done:
				require.ErrorIs(t, err, context.Canceled)
			case <-time.After(2 * time.Second):
				t.Fatalf("%s still runs 2s after it was cancelled", tc.tool)
			}
			testkit.WaitGoroutines(t, before, 2*time.Second)
		})
	}
}

// TestTools_cancelledBefore: every tool checks its context before it
// walks, reads or writes anything.
func TestTools_cancelledBefore(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	e.file("a/b/f.txt", "x\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for tool, args := range map[string]m{
		"read":  {"path": "a/b/f.txt"},
		"write": {"path": "a/b/g.txt", "content": "x"},
		"edit":  {"path": "a/b/f.txt", "old_string": "x", "new_string": "y"},
		"list":  {"path": "a"},
		"glob":  {"pattern": "**"},
		"grep":  {"pattern": "x"},
	} {
		_, err := e.body(t, tool)(ctx, inputOf(t, args))
		require.ErrorIs(t, err, context.Canceled, tool)
	}
	_, err := os.Stat(filepath.Join(e.root, "a/b/g.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
