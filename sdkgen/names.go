package sdkgen

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ptcx/ptcx/internal/text"
)

// isIdentifier reports whether s can be written unquoted as a property name or after `tools.`.
// It accepts only ASCII identifiers: anything else is quoted, which is always valid. Reserved
// words are identifiers here, since TypeScript allows them as property names.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c == '$' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z'):
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// quote renders s as a TypeScript (and JavaScript, and JSON) double-quoted string literal. It
// escapes quotes, backslashes, every control and line-separator character and everything
// unicode.IsPrint rejects, so the literal is one line of printable text. Invalid UTF-8 becomes
// U+FFFD. Past U+FFFF it writes a surrogate pair of \u escapes.
func quote(s string) string {
	return quoteWith(s, func(b *strings.Builder, r rune) {
		if r > 0xFFFF {
			r -= 0x10000
			writeUnicodeEscape(b, 0xD800+(r>>10))
			writeUnicodeEscape(b, 0xDC00+(r&0x3FF))
			return
		}
		writeUnicodeEscape(b, r)
	})
}

// quoteWith renders s as a one-line double-quoted string literal of printable text, in the
// syntax TypeScript and Python share: quotes, backslashes, \n, \r and \t escaped as such, every
// other control and line-separator character and whatever unicode.IsPrint rejects written by
// escape, the language's own. Invalid UTF-8 becomes U+FFFD.
func quoteWith(s string, escape func(*strings.Builder, rune)) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < utf8.RuneSelf && r >= 0x20 && r != 0x7f || r >= utf8.RuneSelf && unicode.IsPrint(r) {
				b.WriteRune(r)
				continue
			}
			escape(&b, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func writeUnicodeEscape(b *strings.Builder, r rune) {
	const hex = "0123456789abcdef"
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hex[(r>>shift)&0xF])
	}
}

// propertyKey renders a property name for a type literal or an object literal.
func propertyKey(name string) string {
	if isIdentifier(name) {
		return name
	}
	return quote(name)
}

// pascal turns a tool or definition name into a PascalCase identifier part: every run of ASCII
// letters and digits is a word whose first letter is upper-cased; everything else separates words.
// The result may be empty or start with a digit; callers decide what to do then.
func pascal(s string) string {
	var b strings.Builder
	upper := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		isLetter := ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
		isDigit := '0' <= c && c <= '9'
		if !isLetter && !isDigit {
			upper = true
			continue
		}
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		b.WriteByte(c)
		upper = false
	}
	return b.String()
}

// typePrefix derives the prefix of a tool's type names (`write_file` → `WriteFile`). It always
// returns an identifier that starts with an upper-case letter.
func typePrefix(toolName string) string {
	p := pascal(toolName)
	if p == "" || p[0] >= '0' && p[0] <= '9' {
		p = "Tool" + p
	}
	return p
}

// nameTable hands out unique type names. A name that is taken gets the smallest numeric suffix
// from 2 up that is free, so the same sequence of requests always gives the same names.
type nameTable struct {
	taken map[string]bool
}

func newNameTable(reserved []string) *nameTable {
	t := &nameTable{taken: make(map[string]bool, len(reserved))}
	for _, n := range reserved {
		t.taken[n] = true
	}
	return t
}

func (t *nameTable) alloc(base string) string {
	name := base
	for i := 2; t.taken[name]; i++ {
		name = base + strconv.Itoa(i)
	}
	t.taken[name] = true
	return name
}

// commentText makes s safe and compact for a one-line comment: invalid UTF-8 is replaced,
// control characters and bidirectional-override characters are dropped, runs of white space
// (line breaks included) become one space, and `*/` cannot close the comment early.
func commentText(s string) string {
	return strings.ReplaceAll(oneLine(s), "*/", `*\/`)
}

// oneLine is commentText without the `*/` escape: invalid UTF-8 replaced, control and
// bidirectional-override characters dropped, white space runs made one space.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case unicode.IsControl(r), isBidiControl(r):
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	return strings.Join(strings.Fields(s), " ")
}

func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F
}

// docComment renders a one-line JSDoc comment, or "" when there is nothing to say.
func docComment(s string) string {
	t := commentText(s)
	if t == "" {
		return ""
	}
	return "/** " + t + " */"
}

// inlineComment renders a short /* ... */ comment for use inside a type expression.
func inlineComment(s string) string {
	const max = 120
	return "/* " + text.ShortenRunes(commentText(s), max) + " */"
}
