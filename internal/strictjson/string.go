package strictjson

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// str checks the string at c.i, which starts with a quote, and reads past
// it. For a key it returns the span of its bytes, decoded when it has an
// escape.
func (c *checker) str(key bool) (span, error) {
	c.i++
	from, plain := c.i, c.i // the string's contents; the part not yet decoded
	escaped := false
	for c.i < len(c.b) {
		ch := c.b[c.i]
		switch {
		case ch == '"':
			end := c.i
			c.i++
			if !escaped {
				return span{start: from, end: end}, nil
			}
			c.decoded = append(c.decoded, c.b[plain:end]...)
			return span{start: from, end: len(c.decoded), decoded: true}, nil
		case ch == '\\':
			if key {
				if !escaped {
					escaped, from = true, len(c.decoded)
				}
				c.decoded = append(c.decoded, c.b[plain:c.i]...)
			}
			r, err := c.escape()
			if err != nil {
				return span{}, err
			}
			if key {
				c.decoded = utf8.AppendRune(c.decoded, r)
			}
			plain = c.i
		case ch < 0x20:
			return span{}, c.syntax(fmt.Sprintf("a control character (0x%02x) in a string: escape it", ch))
		case ch < utf8.RuneSelf:
			c.i++
		default:
			r, n := utf8.DecodeRune(c.b[c.i:])
			if r == utf8.RuneError && n == 1 {
				return span{}, c.fail(c.i, fmt.Sprintf("the string is not UTF-8 (byte 0x%02x)", ch))
			}
			c.i += n
		}
	}
	return span{}, c.syntax("the JSON ends inside a string")
}

// escape reads the escape at c.i and returns the character it stands for:
// a surrogate escape must be the first half of a pair followed by its
// second, which it reads too.
func (c *checker) escape() (rune, error) {
	at := c.i
	if c.i+1 >= len(c.b) {
		return 0, c.syntax("the JSON ends inside a string")
	}
	esc := c.b[c.i+1]
	c.i += 2
	switch esc {
	case '"', '\\', '/':
		return rune(esc), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
	default:
		c.i = at
		return 0, c.syntax(fmt.Sprintf("an invalid escape %q in a string", []byte{'\\', esc}))
	}
	r, ok := c.hex4()
	if !ok {
		c.i = at
		return 0, c.syntax("an invalid \\u escape in a string: want four hexadecimal digits")
	}
	if !utf16.IsSurrogate(r) {
		return r, nil
	}
	if r < 0xdc00 && c.i+1 < len(c.b) && c.b[c.i] == '\\' && c.b[c.i+1] == 'u' {
		c.i += 2
		low, ok := c.hex4()
		if !ok {
			c.i -= 2
			return 0, c.syntax("an invalid \\u escape in a string: want four hexadecimal digits")
		}
		if pair := utf16.DecodeRune(r, low); pair != utf8.RuneError {
			return pair, nil
		}
	}
	return 0, c.fail(at, fmt.Sprintf("the string has a lone surrogate, \\u%04x (JSON text must be Unicode: a surrogate escape is the first half of a pair followed by its second)", r))
}

// hex4 reads four hexadecimal digits at c.i.
func (c *checker) hex4() (rune, bool) {
	if c.i+4 > len(c.b) {
		return 0, false
	}
	var r rune
	for _, h := range c.b[c.i : c.i+4] {
		switch {
		case h >= '0' && h <= '9':
			r = r<<4 | rune(h-'0')
		case h >= 'a' && h <= 'f':
			r = r<<4 | rune(h-'a'+10)
		case h >= 'A' && h <= 'F':
			r = r<<4 | rune(h-'A'+10)
		default:
			return 0, false
		}
	}
	c.i += 4
	return r, true
}
