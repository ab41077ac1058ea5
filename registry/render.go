package registry

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Text is model text built under a byte limit. It keeps the first limit
// bytes written and only counts the rest, so building a text far over its
// limit costs the limit in memory, never the text's size; Size still says
// how long the whole text would have been. The zero value has a limit of
// 0. A Text is used by one goroutine at a time.
type Text struct {
	limit int
	buf   []byte
	size  int // every byte written, kept or not
}

// NewText returns an empty Text that keeps at most limit bytes.
func NewText(limit int) *Text { return &Text{limit: max(limit, 0)} }

// WriteString appends s.
func (t *Text) WriteString(s string) {
	if room := t.limit - len(t.buf); room > 0 {
		k := min(len(s), room)
		t.grow(k)
		t.buf = append(t.buf, s[:k]...)
	}
	t.size += len(s)
}

func (t *Text) write(b []byte) {
	if room := t.limit - len(t.buf); room > 0 {
		k := min(len(b), room)
		t.grow(k)
		t.buf = append(t.buf, b[:k]...)
	}
	t.size += len(b)
}

// grow makes room for n more bytes, doubling the buffer up to the limit:
// append's own growth for large slices would allocate several times the
// limit on the way there.
func (t *Text) grow(n int) {
	if len(t.buf)+n <= cap(t.buf) {
		return
	}
	b := make([]byte, len(t.buf), min(max(2*cap(t.buf), len(t.buf)+n, 64), t.limit))
	copy(b, t.buf)
	t.buf = b
}

// spaces is indentation to copy from.
const spaces = "                                                                "

// newline appends a newline and depth levels of two-space indentation,
// counting them without building them once the limit is reached.
func (t *Text) newline(depth int) {
	n := 1 + 2*depth
	if room := t.limit - len(t.buf); room > 0 {
		k := min(n, room)
		t.grow(k)
		t.buf = append(t.buf, '\n')
		for k--; k > 0; k -= min(k, len(spaces)) {
			t.buf = append(t.buf, spaces[:min(k, len(spaces))]...)
		}
	}
	t.size += n
}

// Size is the number of bytes written, kept or not.
func (t *Text) Size() int { return t.size }

// Over reports whether more than the limit was written.
func (t *Text) Over() bool { return t.size > t.limit }

// String returns the text: all of it when it is not over its limit, else
// its first limit bytes without a character the cut left incomplete.
func (t *Text) String() string {
	b := t.buf
	if t.Over() {
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	return string(b)
}

// WriteValue appends the default model text of a value: a JSON string raw,
// anything else as JSON indented by two spaces (exactly as json.Indent
// writes it), nil as "null", and text that is not JSON as it is. The work
// is proportional to len(v), however deep it nests and however long its
// indented form would be.
func (t *Text) WriteValue(v json.RawMessage) {
	v = bytes.TrimSpace(v)
	switch {
	case len(v) == 0:
		t.WriteString("null")
	case v[0] == '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			t.WriteString(s)
			return
		}
		t.write(v)
	case !json.Valid(v):
		t.write(v)
	default:
		t.indent(v)
	}
}

// indent writes valid JSON indented as json.Indent(dst, v, "", "  ") does:
// insignificant space dropped, each element on its own line, a space after
// a colon, empty objects and arrays kept as {} and [].
func (t *Text) indent(v []byte) {
	depth := 0
	open := false // an object or array just opened: its first element indents
	for i := 0; i < len(v); {
		c := v[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			i++
			continue
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				t.newline(depth)
			}
			t.write(v[i : i+1])
			i++
			continue
		}
		if open {
			open = false
			depth++
			t.newline(depth)
		}
		switch c {
		case '{', '[':
			open = true
			t.write(v[i : i+1])
			i++
		case ',':
			t.write(v[i : i+1])
			t.newline(depth)
			i++
		case ':':
			t.WriteString(": ")
			i++
		case '"':
			end := stringEnd(v, i)
			t.write(v[i:end])
			i = end
		default: // a number, true, false or null
			end := i + 1
			for end < len(v) && !delimiter(v[end]) {
				end++
			}
			t.write(v[i:end])
			i = end
		}
	}
}

// delimiter reports whether c ends a number or a literal.
func delimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ':', ']', '}':
		return true
	}
	return false
}

// stringEnd returns the index just past the JSON string that starts at
// v[i] (a quote).
func stringEnd(v []byte, i int) int {
	for j := i + 1; j < len(v); {
		k := bytes.IndexAny(v[j:], `"\`)
		if k < 0 {
			return len(v)
		}
		j += k
		if v[j] == '"' {
			return j + 1
		}
		j += 2 // a backslash and the byte it escapes
	}
	return len(v)
}

// RenderText returns the default model text for a value (see
// Text.WriteValue), within max(limit, len(v)) bytes: when the indented form
// would be longer, the value is shown as it is, unindented, so that
// rendering never costs more than the limit beyond the value itself.
func RenderText(v json.RawMessage, limit int) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "null"
	}
	t := NewText(max(limit, len(v)))
	t.WriteValue(v)
	if t.Over() {
		return string(v)
	}
	return t.String()
}
