package workspace_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/workspace"
)

// TestWalk_entryBound: glob and grep read at most the scan limit of
// directory entries (lowered here to 10), at, below and past it; past it
// the result is truncated and says why.
func TestWalk_entryBound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files int // in one directory, plus the directory itself: files+1 entries
		cut   bool
	}{
		{"below", 8, false},
		{"at", 9, false},
		{"past", 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, workspace.Options{})
			e.ws.SetScanLimit(10)
			for i := range tc.files {
				e.file(fmt.Sprintf("d/f%d.txt", i), "x\n")
			}
			g := ok[globOut](t, e, "glob", m{"pattern": "**/*.txt"})
			r := ok[grepOut](t, e, "grep", m{"pattern": "x"})
			gt, err := e.call(t, context.Background(), "glob", m{"pattern": "**/*.txt"})
			require.NoError(t, err)
			rt, err := e.call(t, context.Background(), "grep", m{"pattern": "x"})
			require.NoError(t, err)
			require.Equal(t, tc.cut, g.Truncated)
			require.Equal(t, tc.cut, r.Truncated)
			if !tc.cut {
				require.Len(t, g.Matches, tc.files)
				require.Len(t, r.Matches, tc.files)
				return
			}
			require.Len(t, g.Matches, 9, "what was read until the bound is reported")
			require.Len(t, r.Matches, 9)
			require.Contains(t, gt.Text, "[stopped after reading 10 directory entries, the search limit: narrow the pattern or the path]")
			require.Contains(t, rt.Text, "[stopped after reading 10 directory entries, the search limit: narrow the path or the glob]")
		})
	}
}

// TestWalk_depthBound: a walk does not enter directories deeper than the
// path depth bound, so it finds a file at that depth and not below it.
func TestWalk_depthBound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		depth int // of the file
		found bool
	}{
		{"below", 255, true},
		{"at", 256, true},
		{"past", 257, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, workspace.Options{})
			rel := strings.Repeat("a/", tc.depth-1) + "f.txt"
			require.NoError(t, os.MkdirAll(filepath.Join(e.root, filepath.Dir(rel)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(e.root, rel), []byte("x\n"), 0o644))
			out, err := e.call(t, context.Background(), "glob", m{"pattern": "**/f.txt"})
			require.NoError(t, err)
			if tc.found {
				require.Equal(t, rel, out.Text)
				return
			}
			require.Equal(t, "[directories more than 256 levels deep were not searched: narrow the pattern or the path]", out.Text)
			r := ok[grepOut](t, e, "grep", m{"pattern": "x"})
			require.True(t, r.Truncated)
			require.Empty(t, r.Matches)
		})
	}
}

// TestList_entryBound: list reads at most the scan limit of entries
// (lowered here to 10), at, below and past it, and keeps only the first
// entries by name in memory.
func TestList_entryBound(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries int
		text    string
	}{
		{"below", 9, "[showing 3 of 9 entries]"},
		{"at", 10, "[showing 3 of 10 entries]"},
		{"past", 11, "[showing the first 3 by name of the first 10 entries read: the directory has more, and list reads at most 10]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, workspace.Options{MaxMatches: 3})
			e.ws.SetScanLimit(10)
			for i := range tc.entries {
				e.file(fmt.Sprintf("f%02d", i), "")
			}
			out, err := e.call(t, context.Background(), "list", m{})
			require.NoError(t, err)
			require.Contains(t, out.Text, tc.text)
			r := ok[listOut](t, e, "list", m{})
			require.True(t, r.Truncated)
			require.Len(t, r.Entries, 3)
		})
	}
}

// TestList_manyEntries: a directory far larger than the cap lists its
// first entries by name, whatever order the system returns them in.
func TestList_manyEntries(t *testing.T) {
	e := newEnv(t, workspace.Options{MaxMatches: 5})
	for i := range 1200 {
		e.file(fmt.Sprintf("f%04d", (i*7919)%1200), "")
	}
	r := ok[listOut](t, e, "list", m{})
	var names []string
	for _, x := range r.Entries {
		names = append(names, x.Name)
	}
	require.Equal(t, []string{"f0000", "f0001", "f0002", "f0003", "f0004"}, names)
	out, err := e.call(t, context.Background(), "list", m{})
	require.NoError(t, err)
	require.Contains(t, out.Text, "[showing 5 of 1200 entries]")
}
