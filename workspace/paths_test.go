package workspace_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/workspace"
)

// escapeEnv builds a workspace with every kind of way out.
func escapeEnv(t *testing.T) *env {
	e := newEnv(t, workspace.Options{})
	e.file("a/inside.txt", "inside\n")
	e.link(filepath.Join(e.outside, "secret.txt"), "abs-file")       // absolute link to an outside file
	e.link(e.outside, "abs-dir")                                     // absolute link to an outside directory
	e.link("../"+filepath.Base(e.outside)+"/secret.txt", "rel-file") // relative link that climbs out
	e.link("../../../../../../../../..", "a/up")                     // relative link far above the root
	e.link(filepath.Join(e.outside, "nothing-here"), "dangling")     // dangling link pointing outside
	e.link("loop2", "loop1")
	e.link("loop1", "loop2")
	e.link(e.outside, "a/b/out") // a link out below real directories
	return e
}

// escapes lists path arguments that must all be refused, and what the
// error must say.
var escapes = []struct {
	name, path string
	kind       error
}{
	{"dotdot", "../x", workspace.ErrEscapes},
	{"dotdot alone", "..", workspace.ErrEscapes},
	{"dotdot inside", "a/../../x", workspace.ErrEscapes},
	{"deep dotdot", "a/b/../../../secret.txt", workspace.ErrEscapes},
	{"absolute outside", "/etc/passwd", workspace.ErrEscapes},
	{"absolute root", "/", workspace.ErrEscapes},
	{"link to file outside", "abs-file", workspace.ErrEscapes},
	{"relative link out", "rel-file", workspace.ErrEscapes},
	{"link to dir outside", "abs-dir/secret.txt", workspace.ErrEscapes},
	{"link dir itself", "abs-dir", workspace.ErrEscapes},
	{"intermediate link far up", "a/up/etc/passwd", workspace.ErrEscapes},
	{"nested link out", "a/b/out/secret.txt", workspace.ErrEscapes},
	{"dangling out", "dangling", workspace.ErrEscapes},
	{"under dangling out", "dangling/new.txt", workspace.ErrEscapes},
	{"loop", "loop1", workspace.ErrSymlinkLoop},
	{"under loop", "loop1/x", workspace.ErrSymlinkLoop},
}

func TestPaths_traversal(t *testing.T) {
	e := escapeEnv(t)
	calls := map[string]func(p string) any{
		"read":  func(p string) any { return m{"path": p} },
		"write": func(p string) any { return m{"path": p, "content": "pwned"} },
		"edit":  func(p string) any { return m{"path": p, "old_string": "top", "new_string": "pwned"} },
		"list":  func(p string) any { return m{"path": p} },
		"glob":  func(p string) any { return m{"pattern": "**", "path": p} },
		"grep":  func(p string) any { return m{"pattern": "secret", "path": p} },
	}
	for tool, args := range calls {
		for _, tc := range escapes {
			t.Run(tool+"/"+tc.name, func(t *testing.T) {
				err := fail(t, e, tool, args(tc.path))
				require.ErrorIs(t, err, tc.kind)
				if tc.kind == workspace.ErrEscapes {
					require.ErrorContains(t, err, "escapes the workspace")
				}
				require.NotContains(t, err.Error(), e.outside, "the message must not reveal host paths")
			})
		}
	}
	// Nothing outside was touched.
	b, err := os.ReadFile(filepath.Join(e.outside, "secret.txt"))
	require.NoError(t, err)
	require.Equal(t, secret, string(b))
	_, err = os.Stat(filepath.Join(e.outside, "nothing-here"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestPaths_writeUnderLinkedParent(t *testing.T) {
	e := escapeEnv(t)
	for _, p := range []string{"abs-dir/new.txt", "abs-dir/sub/new.txt", "a/b/out/new.txt", "a/up/tmp/new.txt"} {
		t.Run(p, func(t *testing.T) {
			err := fail(t, e, "write", m{"path": p, "content": "x"})
			require.ErrorIs(t, err, workspace.ErrEscapes)
		})
	}
	entries, err := os.ReadDir(e.outside)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only secret.txt is outside")
}

func TestPaths_inside(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	e.file("dir/f.txt", "hello\n")
	e.link("dir/f.txt", "rel-link")                        // relative link inside
	e.link(filepath.Join(e.root, "dir/f.txt"), "abs-link") // absolute link inside
	e.link("dir", "dir-link")
	e.link("../dir/f.txt", "dir/up-link") // a link whose target climbs back in
	for _, p := range []string{
		"dir/f.txt", "./dir/f.txt", "dir//f.txt", "dir/../dir/f.txt",
		filepath.Join(e.root, "dir/f.txt"),
		"rel-link", "abs-link", "dir-link/f.txt", "dir-link/../dir/f.txt", "dir/up-link",
	} {
		t.Run(p, func(t *testing.T) {
			r := ok[readOut](t, e, "read", m{"path": p})
			require.Equal(t, "hello\n", r.Content)
		})
	}
	// The root itself, relative or absolute, can be listed.
	for _, p := range []string{".", "", e.root, e.root + "/", "dir/.."} {
		r := ok[listOut](t, e, "list", m{"path": p})
		require.Equal(t, ".", r.Path)
	}
	// Results name paths as the caller gave them, relative to the root.
	r := ok[readOut](t, e, "read", m{"path": filepath.Join(e.root, "dir-link/f.txt")})
	require.Equal(t, "dir-link/f.txt", r.Path)
}

func TestPaths_danglingInsideCanBeCreated(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	e.link("later/target.txt", "pending")
	w := ok[writeOut](t, e, "write", m{"path": "pending", "content": "made"})
	require.True(t, w.Created)
	require.Equal(t, "made", e.content("later/target.txt"))
}

func TestPaths_empty(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	for tool, args := range map[string]m{
		"read":  {"path": ""},
		"write": {"path": "", "content": "x"},
		"edit":  {"path": "", "old_string": "a", "new_string": "b"},
	} {
		require.ErrorContains(t, fail(t, e, tool, args), "path is empty", tool)
	}
}
