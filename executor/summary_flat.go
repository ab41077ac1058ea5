package executor

import "slices"

// flatSummaryValue is decodedSummaryValue for the common head, a whole
// flat object (`{"path":"a.txt","n":1}`): string keys and values of
// printable ASCII without escapes, numbers, true, false and null, read in
// one pass without the JSON decoder (which made the ledger's report cost
// about a microsecond per call). ok is false for anything else (an
// escape, a byte outside printable ASCII, nesting, a head cut short, a
// syntax error), which the decoder then reads.
func flatSummaryValue(head []byte) (best string, ok bool) {
	s := flatSummaryScanner{b: head}
	s.space()
	if !s.byte('{') {
		return "", false
	}
	s.space()
	if s.byte('}') {
		return "", true
	}
	first, rank := "", len(summaryKeys)
	for {
		s.space()
		key, ok := s.str()
		if !ok {
			return "", false
		}
		s.space()
		if !s.byte(':') {
			return "", false
		}
		s.space()
		if s.i < len(s.b) && s.b[s.i] == '"' {
			v, ok := s.str()
			if !ok {
				return "", false
			}
			if first == "" {
				first = v
			}
			if r := slices.Index(summaryKeys, key); r >= 0 && r < rank {
				best, rank = v, r
			}
		} else if !s.scalar() {
			return "", false
		}
		s.space()
		switch {
		case s.byte(','):
			continue
		case s.byte('}'):
			if best == "" {
				best = first
			}
			return best, true
		}
		return "", false
	}
}

type flatSummaryScanner struct {
	b []byte
	i int
}

func (s *flatSummaryScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *flatSummaryScanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string of printable ASCII without escapes, as the decoder
// would give it.
func (s *flatSummaryScanner) str() (string, bool) {
	if !s.byte('"') {
		return "", false
	}
	from := s.i
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return string(s.b[from : s.i-1]), true
		case c == '\\' || c < 0x20 || c > 0x7e:
			return "", false
		}
	}
	return "", false
}

// scalar reads a JSON number (its whole grammar) or true, false or null.
func (s *flatSummaryScanner) scalar() bool {
	for _, w := range []string{"true", "false", "null"} {
		if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
			s.i += len(w)
			return true
		}
	}
	s.byte('-')
	switch {
	case s.byte('0'):
	case s.digits():
	default:
		return false
	}
	if s.byte('.') && !s.digits() {
		return false
	}
	if s.byte('e') || s.byte('E') {
		if !s.byte('+') {
			s.byte('-')
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

func (s *flatSummaryScanner) digits() bool {
	from := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > from
}
