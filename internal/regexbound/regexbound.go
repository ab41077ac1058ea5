// Package regexbound bounds the regular expressions the host compiles for
// someone it does not trust: a program's grep pattern (workspace), a
// client tool's schema (ptcx serve), a value that a JSON Schema's
// "format": "regex" has the validator compile (internal/resolve). Go's
// regexp compiles in time and memory in proportion to the expression, with
// each repetition expanded, and cannot be interrupted; an 8 MB pattern
// asked for 1.1 GB, a 0.9 MB one for 1 s of CPU. The bounds are checked on
// the parse tree, before anything of the compiled size is built. It
// imports only the standard library.
package regexbound

import (
	"errors"
	"fmt"
	"regexp/syntax"
)

const (
	// MaxPatternBytes bounds an expression's text, in bytes: 4 KiB holds
	// any hand-written expression and a long escaped literal.
	MaxPatternBytes = 4 << 10
	// MaxSize bounds an expression's compiled size, in instructions with
	// its repetitions expanded ("x{1000}" is 1000): Size's estimate.
	MaxSize = 2048
)

// The errors of Parse, matched with errors.Is.
var (
	// ErrTooLong: the expression is over MaxPatternBytes.
	ErrTooLong = errors.New("regexbound: the regular expression is too long")
	// ErrTooLarge: the expression is over MaxSize instructions.
	ErrTooLarge = errors.New("regexbound: the regular expression is too large")
)

// Parse parses expr with flags (regexp.Compile's are syntax.Perl; add
// syntax.FoldCase for "(?i)") within the bounds: at most MaxPatternBytes,
// and at most MaxSize instructions by Size's estimate. It returns the tree
// and its estimated size. An expression that does not parse returns the
// parser's *syntax.Error.
func Parse(expr string, flags syntax.Flags) (*syntax.Regexp, int, error) {
	if len(expr) > MaxPatternBytes {
		return nil, 0, fmt.Errorf("%w: it is %d bytes, over the %d-byte limit", ErrTooLong, len(expr), MaxPatternBytes)
	}
	tree, err := syntax.Parse(expr, flags)
	if err != nil {
		return nil, 0, err
	}
	n := Size(tree, MaxSize)
	if n > MaxSize {
		return nil, 0, fmt.Errorf("%w: with its repetitions expanded it is more than %d instructions, the limit; use smaller repetition counts (x{1000} counts 1000) or a shorter expression", ErrTooLarge, MaxSize)
	}
	return tree, n, nil
}

// Size estimates the instructions re compiles to, with each repetition
// expanded (x{n,m} counts m copies of x, x{n,} n+1): one per literal rune,
// character class or assertion, and one per split, plus two per capture.
// It stops counting past limit, so it cannot overflow; it returns more
// than limit then.
func Size(re *syntax.Regexp, limit int) int {
	sum := func(base int) int {
		n := base
		for _, sub := range re.Sub {
			if n += Size(sub, limit); n > limit {
				return limit + 1
			}
		}
		return n
	}
	switch re.Op {
	case syntax.OpLiteral:
		return min(len(re.Rune), limit+1)
	case syntax.OpConcat:
		return sum(0)
	case syntax.OpAlternate:
		return sum(len(re.Sub) - 1)
	case syntax.OpCapture:
		return sum(2)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return sum(1)
	case syntax.OpRepeat:
		copies := re.Max
		if copies < 0 {
			copies = re.Min + 1
		}
		one := sum(0)
		if copies == 0 || one == 0 {
			return 0
		}
		if one > limit/copies {
			return limit + 1
		}
		return one * copies
	}
	return 1
}
