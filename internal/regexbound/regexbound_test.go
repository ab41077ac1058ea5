package regexbound_test

import (
	"errors"
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/regexbound"
)

// TestParse_bounds: the length and the expanded size, each below, at and
// above its bound; an expression that does not parse is the parser's
// error.
func TestParse_bounds(t *testing.T) {
	tests := []struct {
		name string
		expr string
		size int
		err  error
	}{
		{"short", "a+b", 3, nil},
		{"length below", strings.Repeat("[a]", 4095/3) + "a", 1366, nil},
		{"length at", strings.Repeat("[ab]", 1024), 1024, nil},
		{"length above", strings.Repeat("[ab]", 1024) + "a", 0, regexbound.ErrTooLong},
		{"the red team's 0.9 MB pattern", strings.Repeat("a", 900_000), 0, regexbound.ErrTooLong},
		{"size below", "x{1000}y{1000}z{47}", 2047, nil},
		{"size at", "x{1000}y{1000}z{48}", 2048, nil},
		{"size above", "x{1000}y{1000}z{49}", 0, regexbound.ErrTooLarge},
		{"nested repetitions", "(?:a{10}){100}b{1000}c{49}", 0, regexbound.ErrTooLarge},
		{"open-ended repetition counts min+1", "a{999,}b{1000}c{48}", 2048, nil},
		{"a literal of 4 KiB is over the size", strings.Repeat("a", 4096), 0, regexbound.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree, n, err := regexbound.Parse(tt.expr, syntax.Perl)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				require.Nil(t, tree)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, tree)
			require.Equal(t, tt.size, n)
		})
	}
	_, _, err := regexbound.Parse("(", syntax.Perl)
	var se *syntax.Error
	require.True(t, errors.As(err, &se), "%v", err)
}

// TestParse_foldCase: the flags are the parser's ("(?i)" as a flag).
func TestParse_foldCase(t *testing.T) {
	tree, _, err := regexbound.Parse("k", syntax.Perl|syntax.FoldCase)
	require.NoError(t, err)
	require.NotZero(t, tree.Flags&syntax.FoldCase)
	tree, _, err = regexbound.Parse("k", syntax.Perl)
	require.NoError(t, err)
	require.Zero(t, tree.Flags&syntax.FoldCase)
}

// FuzzParse: whatever the expression, Parse refuses it or returns a tree
// within the bounds whose compiled program is within twice the estimate,
// and never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"a", "x{1000}y{1000}z{48}", "(a|b)*c", `\pL{100}`, "((a{10}){10}){10}", "[", "(?i)é+", "a{2,}", "a{0}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		tree, n, err := regexbound.Parse(expr, syntax.Perl)
		if err != nil {
			require.Nil(t, tree)
			return
		}
		require.LessOrEqual(t, len(expr), regexbound.MaxPatternBytes)
		require.LessOrEqual(t, n, regexbound.MaxSize)
		prog, cerr := syntax.Compile(tree.Simplify())
		require.NoError(t, cerr)
		require.LessOrEqual(t, len(prog.Inst), 2*regexbound.MaxSize+8, "the estimate is within twice the real size")
	})
}
