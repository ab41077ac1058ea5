package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDescribe_rootEscape: when the tree changes between our check and the
// open, os.Root refuses the escape; describe must still name it an escape.
// The match is on the text of an unexported os error, so this test pins it.
func TestDescribe_rootEscape(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.Symlink("../"+filepath.Base(outside), filepath.Join(root, "out")))
	fsys, err := os.OpenRoot(root)
	require.NoError(t, err)
	defer fsys.Close()
	_, err = fsys.Open("out/x")
	require.Error(t, err)
	err = describe("out/x", err)
	require.ErrorIs(t, err, ErrEscapes)
	require.NotContains(t, err.Error(), outside)
}

// FuzzWorkspace_resolve: whatever the path, resolve either refuses it or
// returns a location inside the root, and never panics.
func FuzzWorkspace_resolve(f *testing.F) {
	for _, seed := range []string{
		"a.txt", "../x", "a/../../x", "/etc/passwd", ".", "", "a//b/./c", "link/x",
		"up/../x", "abs/x", "loop", "dangling", "\x00", "a/b/c/../../../..", "~",
	} {
		f.Add(seed)
	}
	root, outside := f.TempDir(), f.TempDir()
	require.NoError(f, os.MkdirAll(filepath.Join(root, "a/b/c"), 0o755))
	for link, dest := range map[string]string{
		"link": "a/b", "up": "..", "abs": outside, "loop": "loop", "dangling": "/nowhere", "a/b/in": "../../a",
	} {
		require.NoError(f, os.Symlink(dest, filepath.Join(root, link)))
	}
	w, err := New(root, Options{})
	require.NoError(f, err)
	f.Cleanup(func() { _ = w.Close() })
	f.Fuzz(func(t *testing.T, p string) {
		tg, err := w.resolve(context.Background(), p)
		if err != nil {
			require.NotContains(t, err.Error(), outside)
			return
		}
		for _, rel := range []string{tg.name, tg.real} {
			require.False(t, filepath.IsAbs(rel), rel)
			require.NotEqual(t, "..", rel)
			require.False(t, strings.HasPrefix(rel, "../"), rel)
		}
	})
}
