package workspace

import (
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/ptcx/ptcx/internal/text"
)

// compilePattern compiles grep's regular expression within the bounds:
// at most maxPatternBytes long, and at most maxRegexpSize once its
// repetitions are expanded. The size is estimated on the parse tree, before
// anything of that size is built, and returned with the expression.
func compilePattern(pattern string, caseInsensitive bool) (*regexp.Regexp, int, error) {
	if len(pattern) > maxPatternBytes {
		return nil, 0, failf(ErrLimit, "pattern is %s, more than the %s pattern limit: give a shorter regular expression", size(int64(len(pattern))), size(maxPatternBytes))
	}
	expr := pattern
	if caseInsensitive {
		expr = "(?i)" + expr
	}
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, 0, invalidPattern(pattern, err)
	}
	n := regexpSize(tree, maxRegexpSize)
	if n > maxRegexpSize {
		return nil, 0, failf(ErrLimit, "regular expression %q is too large: with its repetitions expanded it is more than %d instructions, the limit; use smaller repetition counts (x{1000} counts 1000) or a shorter pattern", text.ShortenRunes(pattern, 80), maxRegexpSize)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, 0, invalidPattern(pattern, err)
	}
	return re, n, nil
}

// matchWindow is how much of each line grep searches with an expression of
// the given size: grepLineBytes, or less for an expression over
// maxMatchWork/grepLineBytes instructions, so that matching one line, which
// cannot be interrupted, costs at most about maxMatchWork steps.
func matchWindow(size int) int {
	return min(grepLineBytes, maxMatchWork/max(size, 1))
}

func invalidPattern(pattern string, err error) error {
	problem := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
	return failf(nil, "invalid regular expression %q: %s (the syntax is Go's RE2: no lookaround or backreferences)", text.ShortenRunes(pattern, 80), problem)
}

// regexpSize estimates the instructions re compiles to, with each
// repetition expanded (x{n,m} counts m copies of x, x{n,} n+1): one per
// literal rune, character class or assertion, and one per split, plus two
// per capture. It stops counting past limit, so it cannot overflow; it
// returns more than limit then.
func regexpSize(re *syntax.Regexp, limit int) int {
	sum := func(base int) int {
		n := base
		for _, sub := range re.Sub {
			if n += regexpSize(sub, limit); n > limit {
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
