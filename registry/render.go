package registry

import (
	"bytes"
	"encoding/json"

	"github.com/ptcx/ptcx/internal/text"
)

// Text is model text built under a byte limit. It keeps the first limit
// bytes written and only counts the rest, so building a text far over its
// limit costs the limit in memory, never the text's size; Size still says
// how long the whole text would have been. The zero value has a limit of
// 0. A Text is used by one goroutine at a time.
type Text struct{ s sink }

// sink is a Text's state. The indenter works on a copy of it on its own
// stack, so that its many small writes are not writes to the heap.
type sink struct {
	limit int
	buf   []byte
	size  int // every byte written, kept or not
}

// NewText returns an empty Text that keeps at most limit bytes.
func NewText(limit int) *Text { return &Text{sink{limit: max(limit, 0)}} }

// WriteString appends s.
func (t *Text) WriteString(s string) {
	if room := t.s.limit - len(t.s.buf); room > 0 {
		k := min(len(s), room)
		t.s.grow(k)
		t.s.buf = append(t.s.buf, s[:k]...)
	}
	t.s.size += len(s)
}

// Size is the number of bytes written, kept or not.
func (t *Text) Size() int { return t.s.size }

// Over reports whether more than the limit was written.
func (t *Text) Over() bool { return t.s.size > t.s.limit }

// String returns the text: all of it when it is not over its limit, else
// its first limit bytes without a character the cut left incomplete.
func (t *Text) String() string {
	if t.Over() {
		return string(text.TrimIncomplete(t.s.buf))
	}
	return string(t.s.buf)
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
		t.s.write(v)
	case !json.Valid(v):
		t.s.write(v)
	default:
		s := t.s
		// Room for the usual indented size, within the limit: one
		// allocation for most values.
		s.grow(min(2*len(v)+16, s.limit-len(s.buf)))
		s.indent(v)
		t.s = s
	}
}

func (s *sink) write(b []byte) {
	if room := s.limit - len(s.buf); room > 0 {
		k := min(len(b), room)
		s.grow(k)
		s.buf = append(s.buf, b[:k]...)
	}
	s.size += len(b)
}

func (s *sink) writeByte(c byte) {
	if len(s.buf) < s.limit {
		s.grow(1)
		s.buf = append(s.buf, c)
	}
	s.size++
}

// grow makes room for n more bytes, doubling the buffer up to the limit:
// append's own growth for large slices would allocate several times the
// limit on the way there.
func (s *sink) grow(n int) {
	if len(s.buf)+n <= cap(s.buf) {
		return
	}
	b := make([]byte, len(s.buf), min(max(2*cap(s.buf), len(s.buf)+n, 64), s.limit))
	copy(b, s.buf)
	s.buf = b
}

// spaces is indentation to copy from.
const spaces = "                                                                "

// newline appends a newline and depth levels of two-space indentation,
// counting them without building them once the limit is reached.
func (s *sink) newline(depth int) {
	n := 1 + 2*depth
	if room := s.limit - len(s.buf); room > 0 {
		k := min(n, room)
		s.grow(k)
		s.buf = append(s.buf, '\n')
		for k--; k > 0; k -= min(k, len(spaces)) {
			s.buf = append(s.buf, spaces[:min(k, len(spaces))]...)
		}
	}
	s.size += n
}

// indent writes valid JSON indented as json.Indent(dst, v, "", "  ") does:
// insignificant space dropped, each element on its own line, a space after
// a colon, empty objects and arrays kept as {} and [].
func (s *sink) indent(v []byte) {
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
				s.newline(depth)
			}
			s.writeByte(c)
			i++
			continue
		}
		if open {
			open = false
			depth++
			s.newline(depth)
		}
		switch c {
		case '{', '[':
			open = true
			s.writeByte(c)
			i++
		case ',':
			s.writeByte(c)
			s.newline(depth)
			i++
		case ':':
			s.writeByte(':')
			s.writeByte(' ')
			i++
		case '"':
			end := stringEnd(v, i)
			s.write(v[i:end])
			i = end
		default: // a number, true, false or null
			end := i + 1
			for end < len(v) && !delimiter(v[end]) {
				end++
			}
			s.write(v[i:end])
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
		q := bytes.IndexByte(v[j:], '"')
		if q < 0 {
			return len(v)
		}
		q += j
		b := bytes.IndexByte(v[j:q], '\\')
		if b < 0 {
			return q + 1
		}
		j += b + 2 // a backslash and the byte it escapes
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
