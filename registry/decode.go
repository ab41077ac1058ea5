package registry

import (
	"encoding/json"
	"unicode/utf8"
)

// decodeValid decodes one JSON value that json.Valid accepted into what
// encoding/json's Decoder with UseNumber would return: map[string]any,
// []any, json.Number, string, bool or nil. It does in one allocation-lean
// pass what the Decoder does through a reader, a buffer and a scanner; a
// string it cannot take as is (escapes, invalid UTF-8) goes through
// json.Unmarshal, so that every string decodes exactly as encoding/json
// decodes it. On input json.Valid rejects, the result is unspecified.
func decodeValid(b []byte) any {
	d := validDecoder{b: b}
	return d.value()
}

type validDecoder struct {
	b []byte
	i int
}

func (d *validDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *validDecoder) value() any {
	d.space()
	if d.i >= len(d.b) {
		return nil
	}
	switch c := d.b[d.i]; c {
	case '{':
		d.i++
		m := map[string]any{}
		for {
			d.space()
			if d.i < len(d.b) && d.b[d.i] == '}' {
				d.i++
				return m
			}
			k := d.str()
			d.space()
			d.i++ // ':'
			m[k] = d.value()
			d.space()
			if d.i < len(d.b) && d.b[d.i] == ',' {
				d.i++
			}
		}
	case '[':
		d.i++
		a := []any{}
		for {
			d.space()
			if d.i >= len(d.b) || d.b[d.i] == ']' {
				d.i++
				return a
			}
			a = append(a, d.value())
			d.space()
			if d.i < len(d.b) && d.b[d.i] == ',' {
				d.i++
			}
		}
	case '"':
		return d.str()
	case 't':
		d.i += len("true")
		return true
	case 'f':
		d.i += len("false")
		return false
	case 'n':
		d.i += len("null")
		return nil
	default:
		start := d.i
		for d.i < len(d.b) {
			switch d.b[d.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return json.Number(d.b[start:d.i])
			}
			d.i++
		}
		return json.Number(d.b[start:d.i])
	}
}

// str decodes the string at d.i, which starts with a quote.
func (d *validDecoder) str() string {
	start := d.i
	d.i++ // the opening quote
	plain := true
	for d.i < len(d.b) {
		switch c := d.b[d.i]; {
		case c == '"':
			d.i++
			if plain {
				return string(d.b[start+1 : d.i-1])
			}
			var s string
			_ = json.Unmarshal(d.b[start:d.i], &s)
			return s
		case c == '\\':
			plain = false
			d.i += 2
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && n == 1 {
				plain = false
			}
			d.i += n
		default:
			d.i++
		}
	}
	return string(d.b[start+1:])
}
