package resolve

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ptcx/ptcx/internal/text"
)

// decodeValid decodes one JSON value that json.Valid accepted into what
// encoding/json's Decoder with UseNumber would return: map[string]any,
// []any, json.Number, string, bool or nil. It does in one allocation-lean
// pass what the Decoder does through a reader, a buffer and a scanner; a
// string it cannot take as is (escapes, invalid UTF-8) goes through
// json.Unmarshal, so that every string decodes exactly as encoding/json
// decodes it. On input json.Valid rejects, the result is unspecified.
//
// Unless dups is true, an object with a key twice (once decoded: "a" and
// "\u0061" are the same key) is refused with a *duplicateKey, where the
// Decoder would keep the last value: a policy that reads the first could
// otherwise see other arguments than the tool does. The first duplicate
// found is reported: the first object, in the order the values end, whose
// key repeats one before it.
func decodeValid(b []byte, dups bool) (any, *duplicateKey) {
	d := validDecoder{b: b, dups: dups}
	v := d.value()
	if d.dup != nil {
		slices.Reverse(d.dup.at)
		return nil, d.dup
	}
	return v, nil
}

// duplicateKey is an object's key that appears twice.
type duplicateKey struct {
	key string
	at  []string // the path of the object, from the root
}

// maxShown is how much of a key, and of a path, an error message shows.
const maxShown = 100

// Error says which key repeats in which object, shortening a key or a path
// too long to show.
func (e *duplicateKey) Error() string {
	return "the key " + e.shownKey() + " appears twice in the object at " + e.path()
}

// violation is the error as a schema violation line ("at /a/0: ...").
func (e *duplicateKey) violation() string {
	return "at " + e.path() + ": the key " + e.shownKey() + " appears twice"
}

func (e *duplicateKey) path() string { return text.Shorten("/"+strings.Join(e.at, "/"), 2*maxShown) }

func (e *duplicateKey) shownKey() string { return strconv.Quote(text.Shorten(e.key, maxShown)) }

type validDecoder struct {
	b    []byte
	i    int
	dups bool          // duplicate keys are allowed, the last one wins
	dup  *duplicateKey // set when one was found; decoding then unwinds
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
			v := d.value()
			if d.dup != nil {
				d.dup.at = append(d.dup.at, k)
				return nil
			}
			n := len(m)
			m[k] = v
			if len(m) == n && !d.dups {
				d.dup = &duplicateKey{key: k}
				return nil
			}
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
			v := d.value()
			if d.dup != nil {
				d.dup.at = append(d.dup.at, strconv.Itoa(len(a)))
				return nil
			}
			a = append(a, v)
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
