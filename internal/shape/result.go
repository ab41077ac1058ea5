package shape

import (
	"bytes"
	"encoding/json"

	"unicode/utf8"

	"github.com/ptcx/ptcx/internal/text"
	"github.com/ptcx/ptcx/registry"
)

// result is a run's result as Output shapes it.
type result struct {
	present bool
	raw     json.RawMessage
	str     string // the text of a JSON string, or of a result that is not JSON
	isText  bool   // shown as text rather than JSON
	sized   int    // the size of the full text, once known (-1: not yet)
}

func newResult(raw json.RawMessage) *result {
	r := &result{present: len(raw) > 0, raw: raw, sized: -1}
	switch {
	case !r.present:
	case !json.Valid(raw):
		r.str, r.isText = string(raw), true
	case raw[0] == '"':
		_ = json.Unmarshal(raw, &r.str) // valid, so it decodes
		r.isText = true
	}
	return r
}

// full returns the whole text of the result when it is at most limit
// bytes. It costs the limit, however long the text would be.
func (r *result) full(limit int) (string, bool) {
	if !r.present {
		return "", true
	}
	if r.isText {
		r.sized = len(r.str)
		return r.str, len(r.str) <= limit
	}
	t := registry.NewText(limit)
	t.WriteValue(r.raw)
	r.sized = t.Size()
	return t.String(), !t.Over()
}

// size is the length of the result's whole text (full measured it).
func (r *result) size() int { return max(r.sized, 0) }

// shape returns the result's text within room bytes, cut as the package
// describes, and adds what it left out to c.
func (r *result) shape(room int, c *cuts) string {
	if r.isText {
		if len(r.str) <= room {
			return r.str
		}
		head := text.Truncate(r.str, max(room-64, 0))
		left := len(r.str) - len(head)
		c.strBytes += left
		return head + "\n… (" + count(left, "more byte") + " of this string)"
	}
	j := scanner(r.raw)
	for _, s := range steps {
		var tried cuts
		w := &writer{limit: room}
		s.write(w, j, j.ws(0), 0, &tried)
		if !w.over {
			c.add(tried)
			return string(w.b)
		}
	}
	c.whole, c.resultSize = true, len(r.raw)
	return quote("… the result (" + j.describe(j.ws(0)) + ", " + count(len(r.raw), "byte") + " of JSON) is too large to show within the budget")
}

func (c *cuts) add(o cuts) {
	c.items += o.items
	c.keys += o.keys
	c.strBytes += o.strBytes
	c.containers += o.containers
}

// step is one set of bounds for the shown JSON, tried from the most
// generous to the tightest until the text fits.
type step struct {
	depth, items, keys, str int
}

var steps = []step{
	{64, 200, 200, 4096},
	{16, 50, 50, 1024},
	{8, 20, 30, 400},
	{6, 10, 20, 200},
	{4, 5, 10, 100},
	{3, 3, 6, 60},
	{2, 1, 3, 40},
	{1, 0, 0, 20},
}

// writer collects text up to a limit; past it, it only notes it is over.
type writer struct {
	b     []byte
	limit int
	over  bool
}

func (w *writer) str(s string) {
	if w.over || len(w.b)+len(s) > w.limit {
		w.over = true
		return
	}
	w.b = append(w.b, s...)
}

func (w *writer) newline(depth int) {
	w.str("\n")
	for i := 0; i < depth && !w.over; i++ {
		w.str("  ")
	}
}

// write renders the value at i, at depth, within s's bounds, indented as
// json.Indent does, and returns where the value ends. It stops as soon as
// w is over its limit (and then returns len(j)).
func (s step) write(w *writer, j scanner, i, depth int, c *cuts) int {
	if w.over {
		return len(j)
	}
	switch j[i] {
	case '"':
		e := j.stringEnd(i)
		s.writeString(w, j[i:e], c)
		return e
	case '{', '[':
	default:
		e := j.end(i)
		w.str(string(j[i:e]))
		return e
	}
	object := j[i] == '{'
	closer, limit := byte(']'), s.items
	if object {
		closer, limit = '}', s.keys
	}
	k := j.ws(i + 1)
	if j[k] == closer {
		w.str(string(j[i:i+1]) + string(closer))
		return k + 1
	}
	if depth >= s.depth {
		c.containers++
		w.str(quote("… " + j.describe(i)))
		return j.end(i)
	}
	w.str(string(j[i : i+1]))
	shown, total := 0, 0
	for !w.over {
		k = j.ws(k)
		if shown < limit {
			if shown > 0 {
				w.str(",")
			}
			w.newline(depth + 1)
			if object {
				e := j.stringEnd(k)
				s.writeString(w, j[k:e], c)
				w.str(": ")
				k = j.ws(e) + 1 // past the colon
			}
			k = s.write(w, j, j.ws(k), depth+1, c)
			shown++
		} else {
			if object {
				k = j.ws(j.stringEnd(k)) + 1
			}
			k = j.end(j.ws(k))
		}
		total++
		if k = j.ws(k); k >= len(j) || j[k] != ',' {
			break
		}
		k++
	}
	if w.over {
		return len(j)
	}
	if left := total - shown; left > 0 {
		if shown > 0 {
			w.str(",")
		}
		w.newline(depth + 1)
		if object {
			c.keys += left
			w.str(quote("…") + ": " + quote(count(left, "more key")))
		} else {
			c.items += left
			w.str(quote("… " + count(left, "more item")))
		}
	}
	w.newline(depth)
	w.str(string(closer))
	return k + 1
}

// writeString writes the JSON string lit, or, when it is longer than s.str
// bytes, its head and a count of the bytes left out (of its JSON text).
func (s step) writeString(w *writer, lit []byte, c *cuts) {
	body := lit[1 : len(lit)-1]
	if len(body) <= s.str {
		w.str(string(lit))
		return
	}
	cut := escapeBoundary(body, s.str)
	left := len(body) - cut
	c.strBytes += left
	w.str(`"` + string(body[:cut]) + "… (" + count(left, "more byte") + `)"`)
}

// escapeBoundary returns the largest cut of the body of a JSON string at
// most n bytes that splits neither an escape sequence nor a character.
func escapeBoundary(body []byte, n int) int {
	last := 0 // the last cut found so far
	for i := 0; i < len(body) && i <= n; {
		last = i
		switch c := body[i]; {
		case c == '\\':
			if i+1 < len(body) && body[i+1] == 'u' {
				i += 6
			} else {
				i += 2
			}
		case c < utf8.RuneSelf:
			i++
		default:
			_, size := utf8.DecodeRune(body[i:])
			i += size
		}
	}
	return last
}

// quote is s as a JSON string, with <, > and & as they are.
func quote(s string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s) // a string always encodes
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
