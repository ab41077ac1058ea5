package workspace_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/workspace"
)

// body returns the body of the workspace tool name, to call it past the
// schema (which the executor would apply first).
func (e *env) body(t *testing.T, name string) registry.Body {
	t.Helper()
	for _, tool := range e.ws.Tools() {
		if tool.Name == name {
			return tool.Body
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// deepPath returns a relative path of n components, each of width bytes
// but the last, which pads the path to exactly total bytes (total 0: no
// padding, the last component is "f").
func deepPath(t *testing.T, n, width, total int) string {
	t.Helper()
	dir := strings.Repeat(strings.Repeat("d", width-1)+"/", n-1)
	last := "f"
	if total > 0 {
		last = strings.Repeat("f", total-len(dir))
	}
	require.LessOrEqual(t, len(last), 255, "a component longer than NAME_MAX")
	p := dir + last
	if total > 0 {
		require.Len(t, p, total)
	}
	return p
}

// TestResolve_pathBounds: every tool that takes a path accepts one at the
// byte and component bounds and refuses one past them, before touching the
// file system.
func TestResolve_pathBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		path func(t *testing.T) string
		ok   bool
	}{
		{"4095 bytes", func(t *testing.T) string { return deepPath(t, 245, 16, 4095) }, true},
		{"4096 bytes", func(t *testing.T) string { return deepPath(t, 245, 16, 4096) }, true},
		{"4097 bytes", func(t *testing.T) string { return deepPath(t, 245, 16, 4097) }, false},
		{"255 components", func(t *testing.T) string { return deepPath(t, 255, 2, 0) }, true},
		{"256 components", func(t *testing.T) string { return deepPath(t, 256, 2, 0) }, true},
		{"257 components", func(t *testing.T) string { return deepPath(t, 257, 2, 0) }, false},
		{"8000 components", func(t *testing.T) string { return deepPath(t, 8000, 2, 0) }, false},
		{"the issue's 8000-deep path", func(t *testing.T) string { return strings.Repeat("a/", 8000) + "f" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, workspace.Options{})
			p := tc.path(t)
			if !tc.ok {
				for tool, args := range map[string]m{
					"read":  {"path": p},
					"write": {"path": p, "content": "x"},
					"edit":  {"path": p, "old_string": "a", "new_string": "b"},
					"list":  {"path": p},
					"glob":  {"pattern": "*", "path": p},
					"grep":  {"pattern": "x", "path": p},
				} {
					err := fail(t, e, tool, args)
					require.ErrorIs(t, err, workspace.ErrLimit, tool)
					require.ErrorContains(t, err, "path limit: give a shorter path", tool)
				}
				return
			}
			w := ok[writeOut](t, e, "write", m{"path": p, "content": "deep\n"})
			require.True(t, w.Created)
			r := ok[readOut](t, e, "read", m{"path": p})
			require.Equal(t, "deep\n", r.Content)
			g := ok[grepOut](t, e, "grep", m{"pattern": "deep", "path": p})
			require.Len(t, g.Matches, 1)
		})
	}
}

// TestResolve_linkDepth: a path within the bound whose symbolic links
// expand it past the component bound is refused too.
func TestResolve_linkDepth(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra int // components after the link, whose target has 200
		ok    bool
	}{
		{"255 resolved", 55, true},
		{"256 resolved", 56, true},
		{"257 resolved", 57, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, workspace.Options{})
			target := strings.TrimSuffix(strings.Repeat("a/", 200), "/")
			require.NoError(t, os.MkdirAll(filepath.Join(e.root, target), 0o755))
			e.link(target, "l")
			p := "l/" + deepPath(t, tc.extra, 2, 0) // 1 + extra components, 200 + extra resolved
			if tc.ok {
				ok[writeOut](t, e, "write", m{"path": p, "content": "x"})
				require.Equal(t, "x", e.content(target+"/"+strings.TrimPrefix(p, "l/")))
				return
			}
			err := fail(t, e, "read", m{"path": p})
			require.ErrorIs(t, err, workspace.ErrLimit)
			require.ErrorContains(t, err, "resolves, through its symbolic links, to more than 256 components")
		})
	}
}

// TestGrep_patternBounds: the pattern's length and its expanded size are
// bounded, at, below and past each bound.
func TestGrep_patternBounds(t *testing.T) {
	class := func(n int) string { return strings.Repeat("[ab]", n) } // 4 bytes, 1 instruction each
	for _, tc := range []struct {
		name    string
		pattern string
		msg     string // "" when accepted
	}{
		{"4095 bytes", class(1023) + "abc", ""},
		{"4096 bytes", class(1024), ""},
		{"4097 bytes", class(1024) + "a", "pattern is 4 KiB, more than the 4 KiB pattern limit"},
		{"the issue's 8 MB pattern", strings.Repeat("a", 8<<20), "pattern is 8 MiB, more than the 4 KiB pattern limit"},
		{"size 2047", "x{1000}y{1000}z{47}", ""},
		{"size 2048", "x{1000}y{1000}z{48}", ""},
		{"size 2049", "x{1000}y{1000}z{49}", "is too large: with its repetitions expanded it is more than 2048 instructions"},
		{"a 700-byte blow-up", strings.Repeat("x{1000}", 100), "is too large"},
		{"nested repetition", "((abcdefghij{10}){10}){10}", "is too large"}, // (9+10+2)*10+2, times 10
		{"open-ended repetition", "(abc){999,}", "is too large"},            // counts 1000 copies of 3+2
		{"long literal", strings.Repeat("a", 2049), "is too large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, workspace.Options{})
			e.file("f.txt", "ab\n")
			for _, ci := range []bool{false, true} {
				args := m{"pattern": tc.pattern, "case_insensitive": ci}
				if tc.msg == "" {
					ok[grepOut](t, e, "grep", args)
					continue
				}
				_, err := e.body(t, "grep")(context.Background(), inputOf(t, args)) // past the schema: the body bounds it
				require.ErrorIs(t, err, workspace.ErrLimit)
				require.ErrorContains(t, err, tc.msg)
				require.Less(t, len(err.Error()), 600, "the message quotes at most the pattern's start")
			}
		})
	}
}

// TestGlob_patternBounds: glob's pattern and grep's glob are bounded.
func TestGlob_patternBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		ok   bool
	}{
		{"1023 bytes", 1023, true},
		{"1024 bytes", 1024, true},
		{"1025 bytes", 1025, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, workspace.Options{})
			e.file("f.txt", "x\n")
			pattern := strings.Repeat("*", tc.n-5) + "f.txt"
			for tool, args := range map[string]m{
				"glob": {"pattern": pattern},
				"grep": {"pattern": "x", "glob": pattern},
			} {
				if tc.ok {
					out, err := e.call(t, context.Background(), tool, args)
					require.NoError(t, err, tool)
					require.Contains(t, out.Text, "f.txt", tool)
					continue
				}
				err := fail(t, e, tool, args)
				require.ErrorIs(t, err, workspace.ErrLimit, tool)
				require.ErrorContains(t, err, "more than the 1 KiB glob limit", tool)
			}
		})
	}
}

// TestWrite_sizeBound: write's content is bounded by the file size limit.
func TestWrite_sizeBound(t *testing.T) {
	const limit = 32 << 20
	for _, tc := range []struct {
		name string
		n    int
		ok   bool
	}{
		{"below", limit - 1, true},
		{"at", limit, true},
		{"past", limit + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, workspace.Options{})
			out, err := e.body(t, "write")(context.Background(), inputOf(t, m{"path": "big.txt", "content": strings.Repeat("a", tc.n)}))
			if tc.ok {
				require.NoError(t, err)
				require.Contains(t, out.Text, "created big.txt")
				fi, err := os.Stat(filepath.Join(e.root, "big.txt"))
				require.NoError(t, err)
				require.EqualValues(t, tc.n, fi.Size())
				return
			}
			require.ErrorIs(t, err, workspace.ErrTooLarge)
			require.ErrorContains(t, err, "more than the 32 MiB file size limit")
			_, err = os.Stat(filepath.Join(e.root, "big.txt"))
			require.ErrorIs(t, err, fs.ErrNotExist)
		})
	}
}

// TestEdit_resultBound: edit computes the size of its result before
// building it, and refuses one past the file size limit. A 1 MiB file of
// one letter, each letter replaced by n letters, becomes n MiB.
func TestEdit_resultBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		ok   bool
	}{
		{"31 MiB", 31, true},
		{"32 MiB", 32, true},
		{"33 MiB", 33, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, workspace.Options{MaxReadBytes: 2 << 20})
			e.file("a.txt", strings.Repeat("a", 1<<20))
			ok[readOut](t, e, "read", m{"path": "a.txt"})
			args := m{"path": "a.txt", "old_string": "a", "new_string": strings.Repeat("b", tc.n), "replace_all": true}
			out, err := e.body(t, "edit")(context.Background(), inputOf(t, args))
			fi, serr := os.Stat(filepath.Join(e.root, "a.txt"))
			require.NoError(t, serr)
			if tc.ok {
				require.NoError(t, err)
				require.Contains(t, out.Text, "replaced 1048576 occurrences")
				require.EqualValues(t, tc.n<<20, fi.Size())
				return
			}
			require.ErrorIs(t, err, workspace.ErrTooLarge)
			require.ErrorContains(t, err, `replacing 1048576 occurrences of old_string in "a.txt" would make it 33 MiB, more than the 32 MiB file size limit`)
			require.EqualValues(t, 1<<20, fi.Size(), "the file is unchanged")
		})
	}
}

// TestEdit_inputBounds: a file past the limit is not loaded, and a
// new_string past it is refused before the file is opened.
func TestEdit_inputBounds(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	e.file("small.txt", "a\n")
	e.file("big.txt", strings.Repeat("a\n", 16<<20+1)) // 32 MiB and 2 bytes
	ok[readOut](t, e, "read", m{"path": "small.txt"})
	ok[readOut](t, e, "read", m{"path": "big.txt", "start_line": 1, "end_line": 1})
	_, err := e.body(t, "edit")(context.Background(), inputOf(t, m{"path": "big.txt", "old_string": "a", "new_string": "b"}))
	require.ErrorIs(t, err, workspace.ErrTooLarge)
	require.ErrorContains(t, err, `file "big.txt" is 32 MiB, more than the 32 MiB file size limit: edit cannot load it`)
	_, err = e.body(t, "edit")(context.Background(), inputOf(t, m{"path": "small.txt", "old_string": "a", "new_string": strings.Repeat("b", 32<<20+1)}))
	require.ErrorIs(t, err, workspace.ErrTooLarge)
	require.ErrorContains(t, err, "new_string is 32 MiB, more than the 32 MiB file size limit")
}

// TestGrep_matchWindow: a pattern of more than 256 instructions searches
// less of each line (matching a line cannot be interrupted): at 512
// instructions, the first 32 KiB. A match ending at, below and past the
// window's end.
func TestGrep_matchWindow(t *testing.T) {
	const window = 32 << 10
	pattern := "zq|x{509}" // 2 + 509 + 1 instructions: 512
	for _, tc := range []struct {
		name  string
		end   int // where the match ends
		found bool
	}{
		{"below", window - 1, true},
		{"at", window, true},
		{"past", window + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, workspace.Options{})
			e.file("f.txt", strings.Repeat("a", tc.end-2)+"zq"+strings.Repeat("a", 100)+"\n")
			r := ok[grepOut](t, e, "grep", m{"pattern": pattern, "path": "f.txt"})
			require.Equal(t, tc.found, len(r.Matches) == 1)
			small := ok[grepOut](t, e, "grep", m{"pattern": "zq", "path": "f.txt"}) // a small pattern: 64 KiB
			require.Len(t, small.Matches, 1)
		})
	}
}
