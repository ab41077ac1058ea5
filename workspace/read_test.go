package workspace_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/workspace"
)

func TestRead_lines(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	e.file("five.txt", "one\ntwo\nthree\nfour\nfive\n")
	e.file("open.txt", "a\nb") // no final newline
	e.file("empty.txt", "")
	for _, tc := range []struct {
		name string
		args m
		want readOut
	}{
		{"whole", m{"path": "five.txt"}, readOut{"five.txt", "one\ntwo\nthree\nfour\nfive\n", 1, 5, 5, false}},
		{"range", m{"path": "five.txt", "start_line": 2, "end_line": 3}, readOut{"five.txt", "two\nthree\n", 2, 3, 5, true}},
		{"from", m{"path": "five.txt", "start_line": 4}, readOut{"five.txt", "four\nfive\n", 4, 5, 5, false}},
		{"to", m{"path": "five.txt", "end_line": 1}, readOut{"five.txt", "one\n", 1, 1, 5, true}},
		{"one line", m{"path": "five.txt", "start_line": 5, "end_line": 5}, readOut{"five.txt", "five\n", 5, 5, 5, false}},
		{"end clamped", m{"path": "five.txt", "start_line": 3, "end_line": 99}, readOut{"five.txt", "three\nfour\nfive\n", 3, 5, 5, false}},
		{"no final newline", m{"path": "open.txt"}, readOut{"open.txt", "a\nb", 1, 2, 2, false}},
		{"last line open", m{"path": "open.txt", "start_line": 2}, readOut{"open.txt", "b", 2, 2, 2, false}},
		{"empty", m{"path": "empty.txt"}, readOut{"empty.txt", "", 1, 0, 0, false}},
		{"dot path", m{"path": "./five.txt", "end_line": 1}, readOut{"five.txt", "one\n", 1, 1, 5, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, ok[readOut](t, e, "read", tc.args))
		})
	}
}

func TestRead_text(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	e.file("f.txt", "one\ntwo\nthree\n")
	e.file("empty.txt", "")
	for _, tc := range []struct {
		args m
		want string
	}{
		{m{"path": "f.txt"}, "one\ntwo\nthree\n"},
		{m{"path": "f.txt", "end_line": 2}, "one\ntwo\n[lines 1-2 of 3 in f.txt; continue with start_line 3]"},
		{m{"path": "f.txt", "start_line": 3}, "three\n[lines 3-3 of 3 in f.txt]"},
		{m{"path": "empty.txt"}, "(empty.txt is empty)"},
	} {
		out, err := e.call(t, context.Background(), "read", tc.args)
		require.NoError(t, err)
		require.Equal(t, tc.want, out.Text)
	}
}

func TestRead_badInput(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	e.file("f.txt", "one\ntwo\n")
	e.file("empty.txt", "")
	e.file("dir/x", "")
	e.file("nul.bin", "text\x00more")
	e.file("latin1.txt", "caf\xe9\n")
	for _, tc := range []struct {
		name string
		args m
		kind error
		msg  string
	}{
		{"missing", m{"path": "nope.txt"}, fs.ErrNotExist, `"nope.txt" does not exist in the workspace`},
		{"missing dir", m{"path": "no/such/file"}, fs.ErrNotExist, "does not exist"},
		{"under a file", m{"path": "f.txt/x"}, fs.ErrNotExist, "is a file, not a directory"},
		{"directory", m{"path": "dir"}, nil, `"dir" is a directory, not a file: use list`},
		{"nul bytes", m{"path": "nul.bin"}, workspace.ErrBinary, `file "nul.bin" is binary`},
		{"invalid utf-8", m{"path": "latin1.txt"}, workspace.ErrBinary, "invalid UTF-8"},
		{"start past end", m{"path": "f.txt", "start_line": 3}, nil, `start_line 3 is past the end of "f.txt", which has 2 lines`},
		{"past end of empty", m{"path": "empty.txt", "start_line": 2}, nil, "which has 0 lines"},
		{"end before start", m{"path": "f.txt", "start_line": 2, "end_line": 1}, nil, "end_line 1 is before start_line 2"},
		{"start zero", m{"path": "f.txt", "start_line": 0}, api.ErrInvalidArgs, "start_line"},
		{"no path", m{}, api.ErrInvalidArgs, "path"},
		{"path not a string", m{"path": 7}, api.ErrInvalidArgs, "path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := fail(t, e, "read", tc.args)
			if tc.kind != nil {
				require.ErrorIs(t, err, tc.kind)
			}
			require.ErrorContains(t, err, tc.msg)
		})
	}
}

func TestRead_binaryCheckKeepsRunesWhole(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	// A 3-byte rune straddles the 8 KiB sniffing window: still text.
	text := strings.Repeat("a", 8191) + "€" + "\n"
	e.file("edge.txt", text)
	require.Equal(t, text, ok[readOut](t, e, "read", m{"path": "edge.txt"}).Content)
}

func TestRead_huge(t *testing.T) {
	e := newEnv(t, workspace.Options{MaxReadBytes: 1000})
	line := strings.Repeat("x", 99) + "\n" // 100 bytes
	e.file("big.txt", strings.Repeat(line, 50))
	e.file("oneline.txt", strings.Repeat("y", 5000))
	e.file("fits.txt", strings.Repeat(line, 10))

	t.Run("whole file refused", func(t *testing.T) {
		err := fail(t, e, "read", m{"path": "big.txt"})
		require.ErrorIs(t, err, workspace.ErrTooLarge)
		require.ErrorContains(t, err, `file "big.txt" is 4.9 KiB, more than the 1000 bytes read limit: read it in parts by giving start_line and end_line`)
	})
	t.Run("range that fits", func(t *testing.T) {
		r := ok[readOut](t, e, "read", m{"path": "big.txt", "start_line": 11, "end_line": 20})
		require.Equal(t, readOut{"big.txt", strings.Repeat(line, 10), 11, 20, 50, true}, r)
	})
	t.Run("range too large", func(t *testing.T) {
		err := fail(t, e, "read", m{"path": "big.txt", "start_line": 5, "end_line": 40})
		require.ErrorIs(t, err, workspace.ErrTooLarge)
		require.ErrorContains(t, err, "lines 5 to line 40 of \"big.txt\" are more than the 1000 bytes read limit: lines 5-14 fit")
	})
	t.Run("open range too large", func(t *testing.T) {
		err := fail(t, e, "read", m{"path": "big.txt", "start_line": 31})
		require.ErrorContains(t, err, "lines 31 to the end of the file")
		require.ErrorContains(t, err, "lines 31-40 fit")
	})
	t.Run("single line too long", func(t *testing.T) {
		err := fail(t, e, "read", m{"path": "oneline.txt", "start_line": 1, "end_line": 1})
		require.ErrorIs(t, err, workspace.ErrTooLarge)
		require.ErrorContains(t, err, `line 1 of "oneline.txt" alone is more than the 1000 bytes read limit`)
	})
	t.Run("exactly the limit", func(t *testing.T) {
		require.Equal(t, 10, ok[readOut](t, e, "read", m{"path": "fits.txt"}).TotalLines)
	})
}

func TestRead_cancelled(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	e.file("f.txt", "x\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.call(t, ctx, "read", m{"path": "f.txt"})
	require.ErrorIs(t, err, context.Canceled)
}
