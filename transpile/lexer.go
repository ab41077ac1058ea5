package transpile

import (
	"strings"
	"unicode/utf8"
)

// The lexer splits a program into tokens the way esbuild's js_lexer does, as
// far as the pre-check needs: where strings, templates, comments and regular
// expressions begin and end, so that no bracket is hidden from the count and
// none is invented where esbuild sees text. It does not validate: what
// esbuild rejects it may read any way, because esbuild stops at its first
// lexical error.

type tokKind uint8

const (
	tkEOF          tokKind = iota
	tkIdent                // identifiers and keywords; text is the decoded name
	tkNumber               // numeric literals
	tkString               // '…' and "…"
	tkTemplate             // a template without substitutions, or the tail after the last one
	tkTemplateHead         // template text up to and including "${" (the head or a middle part)
	tkRegex                // a regular expression literal
	tkPunct                // punctuators; text is the operator
)

type token struct {
	kind       tokKind
	start, end int
	text       string
	nl         bool // a line terminator precedes the token
	escaped    bool // an identifier written with \u escapes
	fake       bool // inside an ambiguous '/' region (see slashAmbiguous)
}

// slashMode tells the lexer how to read a '/' that is not a comment.
type slashMode uint8

const (
	slashDivide    slashMode = iota // after an operand: a division
	slashRegex                      // where an operand starts: a regular expression
	slashAmbiguous                  // either; see lexer.ambiguousSlash
)

type lexer struct {
	src     string
	pos     int
	slash   slashMode // set by the checker before each next
	fakeEnd int       // tokens starting before this offset are fake
	nl      bool      // a line terminator was skipped since the last token
}

// newLexer starts at the beginning of src, which esbuild sees after a line
// break (the wrapper's header line).
func newLexer(src string) *lexer { return &lexer{src: src, nl: true} }

// errAmbiguousSlash is returned by next for a '/' that could begin a regular
// expression or be a division, where the two readings would tokenize the
// rest of the line differently.
type errAmbiguousSlash struct{ pos int }

func (e *errAmbiguousSlash) Error() string { return "ambiguous '/'" }

// next reads the next token into t; the template text after a '}' that
// closes a substitution is read by templateContinue instead.
func (lx *lexer) next(t *token) error {
	lx.skipSpaceAndComments()
	*t = token{start: lx.pos, nl: lx.nl, fake: lx.pos < lx.fakeEnd}
	lx.nl = false
	if lx.pos >= len(lx.src) {
		t.kind = tkEOF
		return nil
	}
	c := lx.src[lx.pos]
	switch {
	case c == '\'' || c == '"':
		lx.scanString(c)
		t.kind = tkString
	case c == '`':
		lx.pos++
		t.kind = lx.scanTemplate()
	case c >= '0' && c <= '9' || c == '.' && lx.pos+1 < len(lx.src) && isDigit(lx.src[lx.pos+1]):
		lx.scanNumber()
		t.kind = tkNumber
	case c == '#' || c == '\\' || isIdentStart(c) || c >= utf8.RuneSelf:
		t.kind = tkIdent
		t.text = lx.scanIdent()
		t.escaped = strings.IndexByte(lx.src[t.start:lx.pos], '\\') >= 0
		if t.text == "" { // a lone '#' or '\'
			t.kind, t.text = tkPunct, lx.src[t.start:lx.pos]
		}
	case c == '/':
		mode := lx.slash
		if t.fake { // the closing '/' of an ambiguous region, read as a division
			mode = slashDivide
		}
		switch mode {
		case slashRegex:
			lx.scanRegex()
			t.kind = tkRegex
		case slashAmbiguous:
			if err := lx.ambiguousSlash(); err != nil {
				return err
			}
			fallthrough
		default:
			t.kind, t.text = tkPunct, lx.scanPunct()
			t.fake = t.start < lx.fakeEnd
		}
	default:
		t.kind, t.text = tkPunct, lx.scanPunct()
	}
	t.end = lx.pos
	return nil
}

// ambiguousSlash handles a '/' that may be either a division or the start of
// a regular expression. A regular expression ends on its line; if it does
// not, esbuild reading it so stops with an error, and reading a division is
// exact. Otherwise the two readings agree again after the expression's
// closing '/' if the text between cannot start a string, template, comment
// or template continuation in the division reading: then it is read as
// division tokens marked fake (the checker lets them only add to the count),
// and anything else is refused.
func (lx *lexer) ambiguousSlash() error {
	end, ok := regexEnd(lx.src, lx.pos)
	if !ok {
		return nil
	}
	body := lx.src[lx.pos+1 : end-1]
	if strings.ContainsAny(body, "'\"`/}") || strings.Contains(body, "<!--") ||
		end < len(lx.src) && (lx.src[end] == '/' || lx.src[end] == '*') {
		return &errAmbiguousSlash{pos: lx.pos}
	}
	lx.fakeEnd = end
	return nil
}

// regexEnd returns the offset just past the '/' that closes the regular
// expression starting at src[start], and false if it has none on its line.
func regexEnd(src string, start int) (int, bool) {
	inClass := false
	for i := start + 1; i < len(src); i++ {
		switch c := src[i]; c {
		case '\\':
			i++
			if i >= len(src) || isLineTerminatorAt(src, i) {
				return 0, false
			}
		case '[':
			inClass = true
		case ']':
			inClass = false
		case '/':
			if !inClass {
				return i + 1, true
			}
		default:
			if isLineTerminatorAt(src, i) {
				return 0, false
			}
		}
	}
	return 0, false
}

func (lx *lexer) scanRegex() {
	end, ok := regexEnd(lx.src, lx.pos)
	if !ok { // unterminated: esbuild stops here; read to the end of the line
		lx.pos++
		for lx.pos < len(lx.src) && !isLineTerminatorAt(lx.src, lx.pos) {
			lx.pos++
		}
		return
	}
	lx.pos = end
	for lx.pos < len(lx.src) && isIdentPart(lx.src[lx.pos]) {
		lx.pos++
	}
}

func (lx *lexer) skipSpaceAndComments() {
	src := lx.src
	for lx.pos < len(src) {
		c := src[lx.pos]
		switch {
		case c == '\n' || c == '\r':
			lx.nl = true
			lx.pos++
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			lx.pos++
		case c == '/' && lx.pos+1 < len(src) && src[lx.pos+1] == '/':
			lx.skipLine()
		case c == '/' && lx.pos+1 < len(src) && src[lx.pos+1] == '*':
			end := strings.Index(src[lx.pos+2:], "*/")
			stop := len(src)
			if end >= 0 {
				stop = lx.pos + 2 + end + 2
			}
			if containsLineTerminator(src[lx.pos:stop]) {
				lx.nl = true
			}
			lx.pos = stop
		case c == '<' && strings.HasPrefix(src[lx.pos:], "<!--"):
			lx.skipLine() // a legacy HTML comment, as esbuild reads it
		case c == '-' && lx.nl && strings.HasPrefix(src[lx.pos:], "-->"):
			lx.skipLine()
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(src[lx.pos:])
			switch {
			case r == 0x2028 || r == 0x2029:
				lx.nl = true
			case !isUnicodeSpace(r):
				return
			}
			lx.pos += n
		default:
			return
		}
	}
}

func (lx *lexer) skipLine() {
	for lx.pos < len(lx.src) && !isLineTerminatorAt(lx.src, lx.pos) {
		lx.pos++
	}
}

// scanString reads a quoted string as esbuild does: a backslash escapes the
// next character (a CRLF pair together), and an unescaped CR or LF ends it
// (esbuild reports the string unterminated there and stops).
func (lx *lexer) scanString(quote byte) {
	src := lx.src
	lx.pos++
	for lx.pos < len(src) {
		switch c := src[lx.pos]; c {
		case quote:
			lx.pos++
			return
		case '\\':
			lx.pos++
			if strings.HasPrefix(src[lx.pos:], "\r\n") {
				lx.pos++
			}
			if lx.pos < len(src) {
				lx.pos++
			}
		case '\n', '\r':
			return
		default:
			lx.pos++
		}
	}
}

// scanTemplate reads template text after a '`' or after the '}' closing a
// substitution, to the closing '`' (tkTemplate) or to just past the next
// "${" (tkTemplateHead).
func (lx *lexer) scanTemplate() tokKind {
	src := lx.src
	for lx.pos < len(src) {
		switch src[lx.pos] {
		case '`':
			lx.pos++
			return tkTemplate
		case '\\':
			lx.pos += 2
		case '$':
			if lx.pos+1 < len(src) && src[lx.pos+1] == '{' {
				lx.pos += 2
				return tkTemplateHead
			}
			lx.pos++
		default:
			lx.pos++
		}
	}
	lx.pos = len(src)
	return tkTemplate
}

// templateContinue reads the template text after the '}' just returned by
// next that closed a substitution.
func (lx *lexer) templateContinue(start int) token {
	k := lx.scanTemplate()
	return token{kind: k, start: start, end: lx.pos}
}

// scanNumber reads a numeric literal: a prefixed integer (0x, 0o, 0b), or
// digits with at most one '.', an exponent and a BigInt suffix. It does not
// swallow a following '.', so "1..a.b" is a number and two member accesses.
func (lx *lexer) scanNumber() {
	src := lx.src
	digits := func() {
		for lx.pos < len(src) && (isDigit(src[lx.pos]) || src[lx.pos] == '_') {
			lx.pos++
		}
	}
	if src[lx.pos] == '0' && lx.pos+1 < len(src) && strings.IndexByte("xXoObB", src[lx.pos+1]) >= 0 {
		lx.pos += 2
		for lx.pos < len(src) && isIdentPart(src[lx.pos]) {
			lx.pos++
		}
		return
	}
	digits()
	if lx.pos < len(src) && src[lx.pos] == '.' {
		lx.pos++
		digits()
	}
	if lx.pos < len(src) && (src[lx.pos] == 'e' || src[lx.pos] == 'E') {
		lx.pos++
		if lx.pos < len(src) && (src[lx.pos] == '+' || src[lx.pos] == '-') {
			lx.pos++
		}
		digits()
	}
	if lx.pos < len(src) && src[lx.pos] == 'n' {
		lx.pos++
	}
}

// scanIdent reads an identifier (or "#name") and returns it with \u
// escapes decoded, as esbuild names it.
func (lx *lexer) scanIdent() string {
	src := lx.src
	start := lx.pos
	if src[lx.pos] == '#' {
		lx.pos++
	}
	var b []byte // only when an escape is seen
	for lx.pos < len(src) {
		c := src[lx.pos]
		switch {
		case isIdentPart(c):
			lx.pos++
			b = appendIf(b, c)
		case c == '\\':
			r, n := decodeIdentEscape(src[lx.pos:])
			if n == 0 {
				lx.pos++ // not an escape: esbuild reports a syntax error
				return lx.src[start:lx.pos]
			}
			if b == nil {
				b = append([]byte{}, src[start:lx.pos]...)
			}
			b = utf8.AppendRune(b, r)
			lx.pos += n
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(src[lx.pos:])
			if isUnicodeSpace(r) || r == 0x2028 || r == 0x2029 {
				return identText(src[start:lx.pos], b)
			}
			lx.pos += n
			if b != nil {
				b = append(b, src[lx.pos-n:lx.pos]...)
			}
		default:
			return identText(src[start:lx.pos], b)
		}
	}
	return identText(src[start:lx.pos], b)
}

func appendIf(b []byte, c byte) []byte {
	if b == nil {
		return nil
	}
	return append(b, c)
}

func identText(raw string, decoded []byte) string {
	if decoded != nil {
		return string(decoded)
	}
	if raw == "#" {
		return ""
	}
	return raw
}

// decodeIdentEscape decodes \uXXXX or \u{X…} at the start of s; n is 0 if
// s does not start with one.
func decodeIdentEscape(s string) (r rune, n int) {
	if len(s) < 3 || s[1] != 'u' {
		return 0, 0
	}
	if s[2] == '{' {
		end := strings.IndexByte(s, '}')
		if end < 4 || end > 12 {
			return 0, 0
		}
		v, ok := parseHex(s[3:end])
		if !ok || v > utf8.MaxRune {
			return 0, 0
		}
		return rune(v), end + 1
	}
	if len(s) < 6 {
		return 0, 0
	}
	v, ok := parseHex(s[2:6])
	if !ok {
		return 0, 0
	}
	return rune(v), 6
}

func parseHex(s string) (int, bool) {
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			v = v*16 + int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v*16 + int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v = v*16 + int(c-'A') + 10
		default:
			return 0, false
		}
		if v > utf8.MaxRune {
			return v, true
		}
	}
	return v, true
}

// scanPunct reads the longest punctuator at the current position (esbuild
// splits '>>' and the like again where it parses type arguments; the
// checker does not need to).
func (lx *lexer) scanPunct() string {
	rest := lx.src[lx.pos:]
	n := 1
	at := func(i int) byte {
		if i < len(rest) {
			return rest[i]
		}
		return 0
	}
	switch c := rest[0]; c {
	case '.':
		if at(1) == '.' && at(2) == '.' {
			n = 3
		}
	case '=':
		switch {
		case at(1) == '=' && at(2) == '=':
			n = 3
		case at(1) == '=' || at(1) == '>':
			n = 2
		}
	case '!':
		switch {
		case at(1) == '=' && at(2) == '=':
			n = 3
		case at(1) == '=':
			n = 2
		}
	case '*', '&', '|', '?':
		switch {
		case at(1) == c && at(2) == '=' && c != '*' || c == '*' && at(1) == '*' && at(2) == '=':
			n = 3
		case c == '?' && at(1) == '.' && !isDigit(at(2)): // "a?.5:b" is a conditional
			n = 2
		case at(1) == c || at(1) == '=' && c != '?':
			n = 2
		}
	case '+', '-':
		if at(1) == c || at(1) == '=' {
			n = 2
		}
	case '/', '%', '^':
		if at(1) == '=' {
			n = 2
		}
	case '<':
		switch {
		case at(1) == '<' && at(2) == '=':
			n = 3
		case at(1) == '<' || at(1) == '=':
			n = 2
		}
	case '>':
		switch {
		case at(1) == '>' && at(2) == '>' && at(3) == '=':
			n = 4
		case at(1) == '>' && (at(2) == '>' || at(2) == '='):
			n = 3
		case at(1) == '>' || at(1) == '=':
			n = 2
		}
	default:
		if c >= utf8.RuneSelf {
			_, n = utf8.DecodeRuneInString(rest)
		}
	}
	lx.pos += n
	return rest[:n]
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}
func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }

// isUnicodeSpace is esbuild's js_ast.IsWhitespace beyond ASCII.
func isUnicodeSpace(r rune) bool {
	switch r {
	case 0x00A0, 0x1680, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

func isLineTerminatorAt(s string, i int) bool {
	switch s[i] {
	case '\n', '\r':
		return true
	case 0xE2: // U+2028 and U+2029 are E2 80 A8 and E2 80 A9
		return i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9)
	}
	return false
}

func containsLineTerminator(s string) bool {
	return strings.ContainsAny(s, "\n\r\u2028\u2029")
}
