package strictjson

import (
	"bytes"
	"fmt"
	"math"
	"strconv"

	"github.com/ptcx/ptcx/internal/text"
)

// MaxDepth is the deepest nesting of arrays and objects Check accepts: as
// deep as a program may nest its own code (transpile.MaxNesting), far
// deeper than any request needs, and a bound on the checker's stack.
const MaxDepth = 1000

// Check returns nil when data is one JSON value (with optional space
// around it) that has no object with a key twice (keys compared once
// decoded: "a" and "\u0061" are the same key), no byte that is not UTF-8,
// no \u escape of a surrogate that is not the first half of a pair
// followed by its second, no number a float64 cannot hold (1e400; one
// that underflows to 0 is taken), and no nesting deeper than MaxDepth.
// Otherwise it returns an *Error for the first problem in the text.
//
// It reads data once, in order. What it holds grows with the nesting and
// with the keys of the objects open at once (their bytes copied only for a
// key with an escape), and, for an object of more than a few keys
// (objectScan), a set holding a copy of each: a few allocations per body,
// and one per key of a large object.
func Check(data []byte) error {
	c := checker{b: data}
	return c.run()
}

// objectScan is the most keys an object's new key is compared with one by
// one; an object with more gets a set.
const objectScan = 16

// A span is a key's bytes: data[start:end], or, for a key with escapes,
// its decoded bytes, checker.decoded[start:end].
type span struct {
	start, end int
	decoded    bool
}

// A frame is an array or object being read.
type frame struct {
	object bool
	items  int // items so far (an array) or keys (an object)
	first  int // an object's first key in checker.keys
	// decodedFrom is where checker.decoded ended when it opened: its
	// keys' decoded bytes, and its members', come after.
	decodedFrom int
	key         span // an object's current key, valid when hasKey
	hasKey      bool
	set         bool // an object's keys are in checker.sets[its depth]
}

type checker struct {
	b       []byte
	i       int
	frames  []frame
	keys    []span // the keys of the objects being read, the innermost's last
	decoded []byte // keys with escapes, decoded
	sets    []map[string]struct{}
}

func (c *checker) space() {
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

func (c *checker) run() error {
	c.space()
	for {
		// A value starts at c.i.
		open, err := c.value()
		if err != nil {
			return err
		}
		if !open {
			if err := c.next(); err != nil || len(c.frames) == 0 {
				return err
			}
		}
	}
}

// next reads past the ends of the containers that end after a value, up
// to the start of the next item or member's value, or to the end of the
// text.
func (c *checker) next() error {
	for {
		c.space()
		if len(c.frames) == 0 {
			if c.i < len(c.b) {
				return c.syntax("data after the JSON value")
			}
			return nil
		}
		f := &c.frames[len(c.frames)-1]
		if c.i >= len(c.b) {
			return c.syntax("the JSON ends before its value does")
		}
		switch ch := c.b[c.i]; {
		case ch == ',':
			c.i++
			c.space()
			if f.object {
				return c.member(f)
			}
			f.items++
			return nil
		case f.object && ch == '}', !f.object && ch == ']':
			c.i++
			c.pop()
		default:
			return c.syntax(fmt.Sprintf("want ',' or the end of the %s, got %s", containerName(f.object), c.token()))
		}
	}
}

func containerName(object bool) string {
	if object {
		return "object"
	}
	return "array"
}

// value reads the value at c.i when it is a string, number or literal, or
// an empty array or object; else it opens the container (reading its
// first key) and reports open: the container's first value is next.
func (c *checker) value() (open bool, err error) {
	if c.i >= len(c.b) {
		return false, c.syntax("the JSON ends before its value does")
	}
	switch ch := c.b[c.i]; ch {
	case '{', '[':
		if len(c.frames) == MaxDepth {
			return false, c.fail(c.i, fmt.Sprintf("the value nests deeper than %d levels of arrays and objects", MaxDepth))
		}
		c.i++
		c.frames = append(c.frames, frame{object: ch == '{', first: len(c.keys), decodedFrom: len(c.decoded)})
		f := &c.frames[len(c.frames)-1]
		c.space()
		if c.i < len(c.b) && (f.object && c.b[c.i] == '}' || !f.object && c.b[c.i] == ']') {
			c.i++
			c.pop()
			return false, nil
		}
		if f.object {
			return true, c.member(f)
		}
		return true, nil
	case '"':
		_, err := c.str(false)
		return false, err
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return false, c.number()
	case 't', 'f', 'n':
		lit := "null"
		if ch == 't' {
			lit = "true"
		} else if ch == 'f' {
			lit = "false"
		}
		if len(c.b)-c.i >= len(lit) && string(c.b[c.i:c.i+len(lit)]) == lit {
			c.i += len(lit)
			return false, nil
		}
	}
	return false, c.syntax("want a JSON value, got " + c.token())
}

// member reads an object's key, checks it is new, and reads the colon:
// its value is next.
func (c *checker) member(f *frame) error {
	if c.i >= len(c.b) || c.b[c.i] != '"' {
		return c.syntax("want a key (a string), got " + c.token())
	}
	at := c.i
	f.hasKey = false
	k, err := c.str(true)
	if err != nil {
		return err
	}
	f.key, f.hasKey = k, true
	if c.seen(f, k) {
		return c.fail(at, fmt.Sprintf("the key %s appears twice in its object (a key may appear only once)", strconv.Quote(text.Shorten(string(c.bytes(k)), 100))))
	}
	f.items++
	c.space()
	if c.i >= len(c.b) || c.b[c.i] != ':' {
		return c.syntax("want ':' after the key, got " + c.token())
	}
	c.i++
	c.space()
	return nil
}

// seen reports whether f's object has key k already, and adds it.
func (c *checker) seen(f *frame, k span) bool {
	kb := c.bytes(k)
	depth := len(c.frames) - 1
	if f.set {
		set := c.sets[depth]
		if _, ok := set[string(kb)]; ok {
			return true
		}
		set[string(kb)] = struct{}{}
		return false
	}
	for _, o := range c.keys[f.first:] {
		if bytes.Equal(c.bytes(o), kb) {
			return true
		}
	}
	c.keys = append(c.keys, k)
	if len(c.keys)-f.first > objectScan {
		for len(c.sets) <= depth {
			c.sets = append(c.sets, nil)
		}
		if c.sets[depth] == nil {
			c.sets[depth] = make(map[string]struct{}, 2*objectScan)
		}
		set := c.sets[depth]
		clear(set)
		for _, o := range c.keys[f.first:] {
			set[string(c.bytes(o))] = struct{}{}
		}
		f.set = true
	}
	return false
}

func (c *checker) bytes(k span) []byte {
	if k.decoded {
		return c.decoded[k.start:k.end]
	}
	return c.b[k.start:k.end]
}

// pop ends the innermost container, forgetting its keys.
func (c *checker) pop() {
	f := c.frames[len(c.frames)-1]
	c.keys, c.decoded = c.keys[:f.first], c.decoded[:f.decodedFrom]
	c.frames = c.frames[:len(c.frames)-1]
}

// number checks the number at c.i and reads past it.
func (c *checker) number() error {
	start := c.i
	if c.b[c.i] == '-' {
		c.i++
	}
	intStart := c.i
	switch {
	case c.i < len(c.b) && c.b[c.i] == '0':
		c.i++
	case c.i < len(c.b) && c.b[c.i] >= '1' && c.b[c.i] <= '9':
		c.digits()
	default:
		return c.syntax("a number without digits")
	}
	intDigits := c.i - intStart
	if c.i < len(c.b) && c.b[c.i] == '.' {
		c.i++
		if c.digits() == 0 {
			return c.syntax("a number without digits after its decimal point")
		}
	}
	exponent := false
	if c.i < len(c.b) && (c.b[c.i] == 'e' || c.b[c.i] == 'E') {
		c.i++
		if c.i < len(c.b) && (c.b[c.i] == '+' || c.b[c.i] == '-') {
			c.i++
		}
		if c.digits() == 0 {
			return c.syntax("a number without digits in its exponent")
		}
		exponent = true
	}
	// Without an exponent, a number of fewer than 309 integer digits is
	// below 1e308: it fits.
	if exponent || intDigits > 308 {
		if f, _ := strconv.ParseFloat(string(c.b[start:c.i]), 64); math.IsInf(f, 0) {
			return c.fail(start, fmt.Sprintf("the number %s is out of range: a number is a float64 (at most about 1.8e308 either way)", text.Shorten(string(c.b[start:c.i]), 40)))
		}
	}
	return nil
}

// digits reads decimal digits at c.i and returns how many.
func (c *checker) digits() int {
	from := c.i
	for c.i < len(c.b) && c.b[c.i] >= '0' && c.b[c.i] <= '9' {
		c.i++
	}
	return c.i - from
}
