package sdkgen

import (
	"fmt"
	"strings"
)

// pyKeywords are Python 3.13's hard keywords: not usable as attribute, parameter or field names.
// (Soft keywords such as match, case, type and _ are ordinary names there.)
var pyKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true,
	"await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
}

// pyName reports whether s can be written as a Python attribute, keyword argument or TypedDict
// class field: an ASCII identifier that is not a keyword and not a dunder name (`__getitem__`
// is the stub's own). Anything else is reached with brackets or a dict.
func pyName(s string) bool {
	if s == "" || pyKeywords[s] || len(s) > 4 && strings.HasPrefix(s, "__") && strings.HasSuffix(s, "__") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z'):
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// pyQuote renders s as a one-line double-quoted Python string literal of printable text
// (quoteWith): what needs escaping beyond the shared escapes is \xNN, \uNNNN or \UNNNNNNNN.
func pyQuote(s string) string {
	return quoteWith(s, func(b *strings.Builder, r rune) {
		switch {
		case r <= 0xFF:
			fmt.Fprintf(b, `\x%02x`, r)
		case r <= 0xFFFF:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			fmt.Fprintf(b, `\U%08x`, r)
		}
	})
}

// pyComment renders a one-line `# ...` comment, or "" when there is nothing to say.
func pyComment(s string) string {
	t := oneLine(s)
	if t == "" {
		return ""
	}
	return "# " + t
}
