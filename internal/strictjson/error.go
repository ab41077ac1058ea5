package strictjson

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ptcx/ptcx/internal/text"
)

// Error is JSON text Check refuses.
type Error struct {
	// Offset is the byte offset of the token at fault; Line and Column
	// (1-based, the column in bytes) say the same for a person.
	Offset       int
	Line, Column int
	// Path is where in the value the token is, in the notation of
	// JavaScript ("results[0].value.a", `headers["content-type"]`): the
	// member or item whose text is at fault, or the container whose syntax
	// is; empty for the top-level value.
	Path string
	// Problem says what is wrong.
	Problem string
	// Syntax is set when the text is not JSON at all (json.Valid refuses
	// it too), rather than JSON that Check refuses.
	Syntax bool
}

func (e *Error) Error() string {
	at := ""
	if e.Path != "" {
		at = "at " + e.Path + ": "
	}
	return fmt.Sprintf("line %d, column %d: %s%s", e.Line, e.Column, at, e.Problem)
}

// token describes the text at c.i for a syntax error.
func (c *checker) token() string {
	if c.i >= len(c.b) {
		return "the end of the text"
	}
	r, _ := utf8.DecodeRune(c.b[c.i:])
	return strconv.QuoteRune(r)
}

func (c *checker) syntax(problem string) error {
	e := c.fail(c.i, problem)
	e.Syntax = true
	return e
}

// fail is the error for a problem at offset.
func (c *checker) fail(offset int, problem string) *Error {
	offset = min(offset, len(c.b))
	line, col := 1, 1
	for _, ch := range c.b[:offset] {
		if ch == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &Error{Offset: offset, Line: line, Column: col, Path: c.path(), Problem: problem}
}

// maxPath is the most bytes of a path an error shows.
const maxPath = 200

// path is where the reader is, as Error.Path.
func (c *checker) path() string {
	var b strings.Builder
	for _, f := range c.frames {
		if b.Len() > 2*maxPath {
			break
		}
		switch {
		case !f.object:
			fmt.Fprintf(&b, "[%d]", f.items)
		case f.hasKey:
			k := string(c.bytes(f.key))
			if identifier(k) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(k)
			} else {
				fmt.Fprintf(&b, "[%s]", strconv.Quote(text.Shorten(k, 100)))
			}
		}
	}
	return text.Shorten(b.String(), maxPath)
}

// identifier reports whether k may follow a dot in a path.
func identifier(k string) bool {
	if k == "" {
		return false
	}
	for i, r := range k {
		letter := r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}
