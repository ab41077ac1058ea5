package workspace

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/ptcx/ptcx/internal/regexbound"
	"github.com/ptcx/ptcx/internal/text"
)

// compilePattern compiles grep's regular expression within the bounds
// (internal/regexbound): at most maxPatternBytes long, and at most
// maxRegexpSize once its repetitions are expanded. The size is estimated on
// the parse tree, before anything of that size is built, and returned with
// the expression.
func compilePattern(pattern string, caseInsensitive bool) (*regexp.Regexp, int, error) {
	if len(pattern) > maxPatternBytes {
		return nil, 0, failf(ErrLimit, "pattern is %s, more than the %s pattern limit: give a shorter regular expression", size(int64(len(pattern))), size(maxPatternBytes))
	}
	flags, expr := syntax.Perl, pattern
	if caseInsensitive {
		flags, expr = flags|syntax.FoldCase, "(?i)"+expr
	}
	_, n, err := regexbound.Parse(pattern, flags)
	switch {
	case errors.Is(err, regexbound.ErrTooLarge):
		return nil, 0, failf(ErrLimit, "regular expression %q is too large: with its repetitions expanded it is more than %d instructions, the limit; use smaller repetition counts (x{1000} counts 1000) or a shorter pattern", text.ShortenRunes(pattern, 80), maxRegexpSize)
	case err != nil:
		return nil, 0, invalidPattern(pattern, err)
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
