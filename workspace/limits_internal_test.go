package workspace

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp/syntax"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestFitsAfterEdit(t *testing.T) {
	const limit = 100
	for _, tc := range []struct {
		name                    string
		size, n, oldLen, newLen int
		fits                    bool
	}{
		{"shrinks", 100, 10, 5, 1, true},
		{"same length", 100, 10, 5, 5, true},
		{"grows to below", 50, 7, 1, 8, true}, // 50 + 7*7 = 99
		{"grows to the limit", 50, 10, 1, 6, true},
		{"grows past", 50, 10, 1, 7, false}, // 110
		{"huge count", 100, math.MaxInt / 2, 1, 3, false},
		{"huge new string", 1, 1, 1, math.MaxInt, false},
		{"both huge", limit, math.MaxInt, 0, math.MaxInt, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.fits, fitsAfterEdit(tc.size, tc.n, tc.oldLen, tc.newLen, limit))
		})
	}
	require.Equal(t, int64(math.MaxInt64), editedSize(1, math.MaxInt, 1, math.MaxInt))
	require.Equal(t, int64(110), editedSize(50, 10, 1, 7))
}

func TestShown(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"plain.txt", "plain.txt"},
		{"with space.txt", "with space.txt"},
		{"été/日本.go", "été/日本.go"},
		{"a\nb", `"a\nb"`},
		{"tab\there", `"tab\there"`},
		{"esc\x1b[31m", `"esc\x1b[31m"`},
		{"bidi\u202etxt.exe", `"bidi\u202etxt.exe"`},
		{"bad\xffutf8", `"bad\xffutf8"`},
		{`"quoted"`, `"\"quoted\""`},
		{"nbsp\u00a0x", `"nbsp\u00a0x"`},
	} {
		require.Equal(t, tc.want, shown(tc.name), "%q", tc.name)
	}
}

// FuzzShown: what shown returns holds no control character, and when it
// quotes, it unquotes to the name.
func FuzzShown(f *testing.F) {
	for _, s := range []string{"a", "a\nb", "\"", "\xff", "\u202e", " x "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		out := shown(name)
		for _, r := range out {
			require.True(t, r == ' ' || strconv.IsPrint(r), "%q in %q", r, out)
		}
		require.True(t, utf8.ValidString(out))
		if out != name {
			back, err := strconv.Unquote(out)
			require.NoError(t, err)
			require.Equal(t, name, back)
		}
	})
}

// FuzzCompilePattern: whatever the pattern, compilePattern refuses it or
// returns a program within the bounds, and never panics.
func FuzzCompilePattern(f *testing.F) {
	for _, s := range []string{"a", "x{1000}y{1000}z{49}", "(a|b)*c", `\pL{100}`, "((a{10}){10}){10}", "[", "(?i)é+", "a{2,}"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, pattern string, ci bool) {
		re, n, err := compilePattern(pattern, ci)
		if err != nil {
			require.Nil(t, re)
			return
		}
		require.LessOrEqual(t, len(pattern), maxPatternBytes)
		require.LessOrEqual(t, n, maxRegexpSize)
		expr := pattern
		if ci {
			expr = "(?i)" + expr
		}
		tree, perr := syntax.Parse(expr, syntax.Perl)
		require.NoError(t, perr)
		prog, cerr := syntax.Compile(tree.Simplify())
		require.NoError(t, cerr)
		require.LessOrEqual(t, len(prog.Inst), 2*maxRegexpSize+8, "the estimate is within twice the real size")
	})
}

// TestOpenFile_otherDevice: a file on another device than the root is
// refused; the test pretends the root is on another device.
func TestOpenFile_otherDevice(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "f.txt"), []byte("x"), 0o644))
	w, err := New(root, Options{})
	require.NoError(t, err)
	defer w.Close()
	if w.dev == nil {
		require.NotEqual(t, "linux", runtime.GOOS, "Linux reports devices")
		return
	}
	tg, err := w.resolve(context.Background(), "f.txt")
	require.NoError(t, err)
	f, _, err := w.openFile(tg, os.O_RDONLY)
	require.NoError(t, err, "the root's own device")
	f.Close()
	other := *w.dev + 1
	w.dev = &other
	_, _, err = w.openFile(tg, os.O_RDONLY)
	require.ErrorIs(t, err, ErrMount)
	require.ErrorContains(t, err, `file "f.txt" is on another file system than the workspace root; ptcx refuses such files because a mount can bring files from outside into the workspace`)
}

// TestResolve_cancelled: resolution checks its context at every component.
func TestResolve_cancelled(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "a/b/c"), 0o755))
	w, err := New(root, Options{})
	require.NoError(t, err)
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = w.resolve(ctx, "a/b/c/"+strings.Repeat("x/", 100))
	require.True(t, errors.Is(err, context.Canceled), "%v", err)
	tg, err := w.resolve(context.Background(), "a/b/c/"+strings.Repeat("x/", 100))
	require.NoError(t, err)
	require.Equal(t, "a/b/c/"+strings.TrimSuffix(strings.Repeat("x/", 100), "/"), tg.real)
}
