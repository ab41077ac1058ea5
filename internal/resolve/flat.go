package resolve

import (
	"unicode/utf8"
)

// A flat object is the common shape of a nested call's arguments, such as
// {"path":"a.txt","limit":10}: one JSON object of at most maxFlatFields
// fields whose keys have no escapes and whose values are strings, numbers,
// booleans or null. scanFlat reads one in a single strict pass, with no
// allocation: it checks the bytes are valid JSON, that no key repeats, and
// notes each value's type, which is all the quick check (quickcheck.go)
// needs; the decoded map is made only when something asks for it
// (Args.Map). Anything it does not recognise, valid or not, is "not flat"
// and goes the general way (json.Valid, decodeValid), which also words the
// errors: scanFlat never refuses what that way accepts, it only skips it.

// maxFlatFields is the most fields a flat object has: the keys are
// compared pairwise for duplicates, so the bound keeps that cheap.
const maxFlatFields = 8

// maxFlatBytes is the longest text scanFlat reads: past it, a scan that
// fails late (a nested value after a long string) would double the work
// of the general way, so longer arguments go that way at once.
const maxFlatBytes = 4096

// flatField is one field of a flat object: its key, as offsets into the
// text (the key needs no decoding: it has no escapes), and what its value
// is, as the quick check's types (a number without a fraction or an
// exponent is both qNumber and qInteger).
type flatField struct {
	from, to   int32
	kind       quickTypes
	vfrom, vto int32 // the value's text (a string's with its quotes)
	escaped    bool  // a string value with an escape in it
}

// flatObject is a flat object's fields, in their order in the text.
type flatObject struct {
	fields [maxFlatFields]flatField
	n      int8 // -1: not flat
}

// FlatStrings reads b as a flat object (scanFlat: at most maxFlatFields
// fields of primitive values, at most maxFlatBytes, no key twice) whose
// string values each decode to their own bytes (no escape, valid UTF-8),
// and calls each, in the fields' order, with the key and the contents of
// every field whose value is a string. For anything else it calls nothing
// and reports false: the JSON decoder must read b.
func FlatStrings(b []byte, each func(key, value []byte)) bool {
	var o flatObject
	if !scanFlat(b, &o) {
		return false
	}
	fields := o.fields[:o.n]
	for _, f := range fields {
		if f.kind == qString && (f.escaped || !utf8.Valid(b[f.vfrom+1:f.vto-1])) {
			return false
		}
	}
	for i, f := range fields {
		if f.kind == qString {
			each(o.key(b, i), b[f.vfrom+1:f.vto-1])
		}
	}
	return true
}

// key returns field i's key bytes in b, the text it was scanned from.
func (o *flatObject) key(b []byte, i int) []byte { return b[o.fields[i].from:o.fields[i].to] }

// find returns the index of the field whose key is name in b, the text o
// was scanned from, or -1 (a flat object's keys have no escapes: their
// bytes are the names).
func (o *flatObject) find(b []byte, name string) int {
	for i := range int(o.n) {
		if string(o.key(b, i)) == name {
			return i
		}
	}
	return -1
}

// scanFlat reads b as a flat object into o and reports whether it is one.
func scanFlat(b []byte, o *flatObject) bool {
	o.n = -1
	if len(b) > maxFlatBytes {
		return false
	}
	s := flatScanner{b: b}
	s.space()
	if !s.byte('{') {
		return false
	}
	n := 0
	s.space()
	if !s.byte('}') {
		for {
			if n == maxFlatFields {
				return false
			}
			from, to, ok := s.key()
			if !ok {
				return false
			}
			for i := range n {
				if string(b[o.fields[i].from:o.fields[i].to]) == string(b[from:to]) {
					return false // a duplicate: the general way reports it
				}
			}
			s.space()
			if !s.byte(':') {
				return false
			}
			s.space()
			vfrom := s.i
			kind, escaped, ok := s.value()
			if !ok {
				return false
			}
			o.fields[n] = flatField{from: int32(from), to: int32(to), kind: kind,
				vfrom: int32(vfrom), vto: int32(s.i), escaped: escaped}
			n++
			s.space()
			if s.byte('}') {
				break
			}
			if !s.byte(',') {
				return false
			}
			s.space()
		}
	}
	s.space()
	if s.i != len(b) {
		return false
	}
	o.n = int8(n)
	return true
}

// flatScanner is scanFlat's position in its text.
type flatScanner struct {
	b []byte
	i int
}

func (s *flatScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte consumes c if it is next.
func (s *flatScanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// key reads a key without escapes, in valid UTF-8 (so that its bytes are
// what it decodes to), and returns the offsets of its contents.
func (s *flatScanner) key() (from, to int, ok bool) {
	if !s.byte('"') {
		return 0, 0, false
	}
	from = s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return from, s.i - 1, true
		case c < 0x20 || c == '\\':
			return 0, 0, false
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n == 1 {
				return 0, 0, false
			}
			s.i += n
		default:
			s.i++
		}
	}
	return 0, 0, false
}

// value reads a primitive value and returns its type, and for a string
// whether it has an escape.
func (s *flatScanner) value() (kind quickTypes, escaped, ok bool) {
	if s.i >= len(s.b) {
		return 0, false, false
	}
	switch s.b[s.i] {
	case '"':
		escaped, ok = s.str()
		return qString, escaped, ok
	case 't':
		return qBoolean, false, s.literal("true")
	case 'f':
		return qBoolean, false, s.literal("false")
	case 'n':
		return qNull, false, s.literal("null")
	default:
		kind, ok = s.number()
		return kind, false, ok
	}
}

func (s *flatScanner) literal(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// str reads a string value as encoding/json's scanner accepts it: no
// control characters, only JSON's escapes (bytes past ASCII are not
// checked, as json.Valid does not check them). It reports whether the
// string has an escape.
func (s *flatScanner) str() (escaped, ok bool) {
	s.i++ // the opening quote
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return escaped, true
		case c < 0x20:
			return false, false
		case c == '\\':
			escaped = true
			if s.i+1 >= len(s.b) {
				return false, false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if len(s.b)-s.i < 6 {
					return false, false
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if !isHex(h) {
						return false, false
					}
				}
				s.i += 6
			default:
				return false, false
			}
		default:
			s.i++
		}
	}
	return false, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number reads a number in JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *flatScanner) number() (quickTypes, bool) {
	s.byte('-')
	switch {
	case s.byte('0'):
	case s.i < len(s.b) && '1' <= s.b[s.i] && s.b[s.i] <= '9':
		s.digits()
	default:
		return 0, false
	}
	kind := qNumber | qInteger
	if s.byte('.') {
		if !s.digits() {
			return 0, false
		}
		kind = qNumber
	}
	if s.byte('e') || s.byte('E') {
		if !s.byte('+') {
			s.byte('-')
		}
		if !s.digits() {
			return 0, false
		}
		kind = qNumber
	}
	return kind, true
}

// digits reads one digit or more.
func (s *flatScanner) digits() bool {
	from := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > from
}
