package shape

import (
	"bytes"
	"encoding/json"
	"fmt"

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
		return head + fmt.Sprintf("\n… (%d more bytes of this string)", left)
	}
	root, err := parse(r.raw)
	if err == nil {
		for _, s := range steps {
			var tried cuts
			w := &writer{limit: room}
			s.write(w, root, 0, &tried)
			if !w.over {
				c.add(tried)
				return string(w.b)
			}
		}
	}
	c.whole, c.resultSize = true, len(r.raw)
	return quote(fmt.Sprintf("… the result (%s, %d bytes of JSON) is too large to show within the budget", root.describe(), len(r.raw)))
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

// node is a parsed JSON value, its object keys in order.
type node struct {
	kind  byte   // '{', '[', '"', or 'v' for a number, true, false or null
	text  string // a string's text, or a literal's JSON
	keys  []string
	items []*node
}

func (n *node) describe() string {
	switch {
	case n == nil:
		return "a value"
	case n.kind == '[':
		return fmt.Sprintf("an array of %d items", len(n.items))
	case n.kind == '{':
		return fmt.Sprintf("an object of %d keys", len(n.keys))
	case n.kind == '"':
		return fmt.Sprintf("a string of %d bytes", len(n.text))
	}
	return "a value"
}

// parse decodes valid JSON into a tree that keeps the order of keys.
func parse(raw json.RawMessage) (*node, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return parseValue(d)
}

func parseValue(d *json.Decoder) (*node, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		n := &node{kind: byte(v)}
		for d.More() {
			if n.kind == '{' {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				s, _ := k.(string)
				n.keys = append(n.keys, s)
			}
			item, err := parseValue(d)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, item)
		}
		if _, err := d.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return &node{kind: '"', text: v}, nil
	case json.Number:
		return &node{kind: 'v', text: v.String()}, nil
	case bool:
		if v {
			return &node{kind: 'v', text: "true"}, nil
		}
		return &node{kind: 'v', text: "false"}, nil
	}
	return &node{kind: 'v', text: "null"}, nil
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

// write renders n at depth within s's bounds, indented as json.Indent
// does, and stops as soon as w is over its limit.
func (s step) write(w *writer, n *node, depth int, c *cuts) {
	if w.over {
		return
	}
	switch n.kind {
	case 'v':
		w.str(n.text)
		return
	case '"':
		if len(n.text) <= s.str {
			w.str(quote(n.text))
			return
		}
		head := text.Truncate(n.text, s.str)
		left := len(n.text) - len(head)
		c.strBytes += left
		w.str(quote(fmt.Sprintf("%s… (%d more bytes)", head, left)))
		return
	}
	if len(n.items) == 0 {
		w.str(map[byte]string{'[': "[]", '{': "{}"}[n.kind])
		return
	}
	if depth >= s.depth {
		c.containers++
		w.str(quote("… " + n.describe()))
		return
	}
	limit, closer := s.items, "]"
	if n.kind == '{' {
		limit, closer = s.keys, "}"
	}
	w.str(string(n.kind))
	shown := min(len(n.items), limit)
	for i := 0; i < shown && !w.over; i++ {
		if i > 0 {
			w.str(",")
		}
		w.newline(depth + 1)
		if n.kind == '{' {
			w.str(quote(n.keys[i]) + ": ")
		}
		s.write(w, n.items[i], depth+1, c)
	}
	if left := len(n.items) - shown; left > 0 {
		if shown > 0 {
			w.str(",")
		}
		w.newline(depth + 1)
		if n.kind == '{' {
			c.keys += left
			w.str(quote("…") + ": " + quote(fmt.Sprintf("%d more keys", left)))
		} else {
			c.items += left
			w.str(quote(fmt.Sprintf("… %d more items", left)))
		}
	}
	w.newline(depth)
	w.str(closer)
}

// quote is s as a JSON string, with <, > and & as they are.
func quote(s string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s) // a string always encodes
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
