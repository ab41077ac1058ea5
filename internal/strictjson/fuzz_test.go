package strictjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ptcx/ptcx/internal/strictjson"
)

// FuzzCheck holds Check to what encoding/json reads: text Check takes is
// valid JSON, UTF-8, decodes without a U+FFFD the text did not spell, with
// every number finite and no key twice; text json.Valid refuses is refused
// as a syntax error; and valid UTF-8 JSON with none of Check's problems
// (found here the decoder's way) is taken.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"code":"return 1"}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `[{"a":{"b":1,"b":2}}]`,
		`"\ud800"`, `"\udc00"`, `"\ud83d\ude00"`, `"\ud800\u0041"`, "\"\xff\"", "\"\xed\xa0\x80\"",
		`1e400`, `-1e400`, `1e-400`, `[1.7976931348623157e308]`, `[01]`, `[1,]`, `{"a" 1}`, `{} {}`,
		`[[[[[]]]]]`, `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k3":0}`,
		"\"\ufffd\\ufffd\"", `["\"\\\/\b\f\n\r\t"]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := strictjson.Check(b)
		var e *strictjson.Error
		if err != nil {
			if !errors.As(err, &e) {
				t.Fatalf("not an *Error: %v", err)
			}
			if e.Offset < 0 || e.Offset > len(b) || e.Line < 1 || e.Column < 1 || e.Problem == "" {
				t.Fatalf("a malformed error %+v", e)
			}
		}
		valid := json.Valid(b)
		switch {
		case err == nil && !valid:
			t.Fatalf("took what json.Valid refuses: %q", b)
		case e != nil && e.Syntax && valid:
			t.Fatalf("a syntax error for valid JSON %q: %v", b, err)
		case !valid:
			return
		}
		ref := reference(t, b)
		if err == nil {
			if !utf8.Valid(b) || ref.dup || ref.infinite || ref.depth > strictjson.MaxDepth {
				t.Fatalf("took %q: UTF-8 %v, %+v", b, utf8.Valid(b), ref)
			}
			if ref.replacement && !bytes.Contains(b, []byte("\ufffd")) && !fffdEscape.Match(b) {
				t.Fatalf("took %q, which decodes with a U+FFFD it does not spell", b)
			}
			return
		}
		if utf8.Valid(b) && !surrogateEscape.Match(b) && !ref.dup && !ref.infinite && ref.depth <= strictjson.MaxDepth {
			t.Fatalf("refused %q, which has none of its problems: %v", b, err)
		}
	})
}

var (
	surrogateEscape = regexp.MustCompile(`\\u[dD][89a-fA-F]`)
	fffdEscape      = regexp.MustCompile(`\\u[fF][fF][fF][dD]`)
)

// found is what reading valid JSON the decoder's way finds.
type found struct {
	dup, infinite, replacement bool
	depth                      int
}

// reference reads valid JSON b token by token, as encoding/json does.
func reference(t *testing.T, b []byte) found {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var stack []*refFrame
	var r found
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return r
		}
		if err != nil {
			t.Fatalf("the decoder refused valid JSON %q: %v", b, err)
		}
		var top *refFrame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok && strings.ContainsRune(s, utf8.RuneError) {
			r.replacement = true
		}
		if top != nil && top.object && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				markValue(stack)
				continue
			}
			k := tok.(string)
			r.dup = r.dup || top.keys[k]
			top.keys[k] = true
			top.wantKey = false
			continue
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				stack = append(stack, &refFrame{object: v == '{', wantKey: v == '{', keys: map[string]bool{}})
				r.depth = max(r.depth, len(stack))
			default:
				stack = stack[:len(stack)-1]
				markValue(stack)
			}
		case json.Number:
			if f, _ := strconv.ParseFloat(string(v), 64); math.IsInf(f, 0) {
				r.infinite = true
			}
			markValue(stack)
		default:
			markValue(stack)
		}
	}
}

// refFrame is an array or object reference is reading.
type refFrame struct {
	object, wantKey bool
	keys            map[string]bool
}

// markValue notes that the innermost object's member has its value.
func markValue(stack []*refFrame) {
	if len(stack) > 0 && stack[len(stack)-1].object {
		stack[len(stack)-1].wantKey = true
	}
}
