package resolve

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

// decodeReference is what decodeValid must match: encoding/json's Decoder
// with UseNumber.
func decodeReference(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// duplicateReference finds, through encoding/json's tokens, the duplicate
// key decodeValid must report: the first, in the order values end, whose
// object already has it; and the path of that object.
func duplicateReference(b []byte) (key, at string, found bool) {
	type frame struct {
		obj       bool
		seen      map[string]bool
		key       string // the key whose value is being read
		expectKey bool
		index     int // the element being read
	}
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err == io.EOF || err != nil {
			return "", "", false
		}
		ended := false // a value ended
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				stack = append(stack, &frame{obj: t == '{', seen: map[string]bool{}, expectKey: t == '{'})
			default:
				stack = stack[:len(stack)-1]
				ended = true
			}
		default:
			if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].expectKey {
				stack[n-1].key, stack[n-1].expectKey = t.(string), false
				continue
			}
			ended = true
		}
		if !ended || len(stack) == 0 {
			continue
		}
		top := stack[len(stack)-1]
		if !top.obj {
			top.index++
			continue
		}
		if top.seen[top.key] {
			path := make([]string, 0, len(stack)-1)
			for _, f := range stack[:len(stack)-1] {
				if f.obj {
					path = append(path, f.key)
				} else {
					path = append(path, strconv.Itoa(f.index))
				}
			}
			return top.key, "/" + strings.Join(path, "/"), true
		}
		top.seen[top.key], top.expectKey = true, true
	}
}

var decodeSamples = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e300`, `-12.25E-3`, `123456789012345678901234567890`,
	`""`, `"plain"`, `"tab\tquote\"backslash\\slash\/"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, "\"caf\xc3\xa9\"",
	"\"bad \xff utf8\"", "\"\xed\xa0\x80\"", ` { "k" : [ 1 , { "n" : null } , "s" ] } `,
	`{"nested":{"deep":[[[[{"x":[true,false,null]}]]]]}}`, `[1,-2,3.0,4e5,"x",{"y":[]}]`, "\t\n\r [ ] \n",
	`{"":""}`, `{"a\u0000b":"\u0000"}`, `{"a":1,"b":{"a":2},"c":[{"a":3},{"b":4}]}`,
}

// duplicateSamples each have a key twice in one object, and where.
var duplicateSamples = map[string]struct{ key, at string }{
	`{"a":1,"a":2}`:                         {"a", "/"},
	`{"a":1,"b":2,"a":1}`:                   {"a", "/"},
	`{"a":1,"\u0061":2}`:                    {"a", "/"}, // the same key once decoded
	`{"":1,"":2}`:                           {"", "/"},
	`{"x":{"k":[1,{"a":1,"a":1}]}}`:         {"a", "/x/k/1"},
	`[0,{"b":{}},{"a":{},"a":{}}]`:          {"a", "/2"},
	`{"a":1,"a":{"b":1,"b":2}}`:             {"b", "/a"}, // the inner value ends first
	"{\"bad \xff\":1,\"bad \xfe\":2}":       {"bad \ufffd", "/"},
	`{"p":"v","q":{"r":[[{"s":1,"s":1}]]}}`: {"s", "/q/r/0/0"},
}

func TestDecodeValid_matchesEncodingJSON(t *testing.T) {
	for _, s := range decodeSamples {
		want, err := decodeReference([]byte(s))
		require.NoError(t, err, s)
		got, dup := decodeValid([]byte(s), false)
		require.Nil(t, dup, s)
		require.Equal(t, want, got, s)
	}
}

func TestDecodeValid_duplicateKeys(t *testing.T) {
	for s, want := range duplicateSamples {
		key, at, found := duplicateReference([]byte(s))
		require.True(t, found, s)
		require.Equal(t, want.key, key, "the reference, %s", s)
		require.Equal(t, want.at, at, "the reference, %s", s)

		got, dup := decodeValid([]byte(s), false)
		require.Nil(t, got, s)
		require.NotNil(t, dup, s)
		require.Equal(t, want.key, dup.key, s)
		require.Equal(t, want.at, dup.path(), s)

		// Allowed, the last one wins, as in encoding/json.
		ref, err := decodeReference([]byte(s))
		require.NoError(t, err)
		got, dup = decodeValid([]byte(s), true)
		require.Nil(t, dup, s)
		require.Equal(t, ref, got, s)
	}
}

func TestParseArgs_duplicateKeyIsInvalidArgs(t *testing.T) {
	_, err := ParseArgs(json.RawMessage(`{"path":"safe.txt","opts":{"n":1},"path":"/etc/passwd"}`))
	require.NotNil(t, err)
	require.Equal(t, api.CodeInvalidArgs, err.Code)
	require.Equal(t, `arguments have a duplicate key: the key "path" appears twice in the object at /; a key may appear only once in an object`, err.Message)
	require.Equal(t, []string{`at /: the key "path" appears twice`}, err.Violations)

	_, err = ParseArgs(json.RawMessage(`{"opts":{"n":1,"n":2}}`))
	require.Equal(t, []string{`at /opts: the key "n" appears twice`}, err.Violations)
}

// A key or a path too long to show is shortened in the message.
func TestParseArgs_duplicateKeyMessageIsBounded(t *testing.T) {
	long := strings.Repeat("k", 100_000)
	deep := strings.Repeat(`{"`+strings.Repeat("p", 1000)+`":`, 50)
	args := deep + `{"` + long + `":1,"` + long + `":2}` + strings.Repeat("}", 50)
	_, err := ParseArgs(json.RawMessage(args))
	require.NotNil(t, err)
	require.Equal(t, api.CodeInvalidArgs, err.Code)
	require.Less(t, len(err.Message), 500, err.Message)
	require.Contains(t, err.Message, `"`+strings.Repeat("k", maxShown)+`…"`)
}

func TestParseJSON_invalidInputKeepsTheDecodersErrors(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":}`:    "invalid character '}' looking for beginning of value",
		`{"a":1} x`: "unexpected data after the JSON value",
		`{"a":1`:    "unexpected EOF",
		``:          "EOF",
	} {
		_, err := parseJSON([]byte(in), false)
		require.ErrorContains(t, err, want, in)
	}
}

func FuzzDecodeValid(f *testing.F) {
	for _, s := range decodeSamples {
		f.Add([]byte(s))
	}
	for s := range duplicateSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		want, err := decodeReference(b)
		if err != nil {
			t.Fatalf("json.Valid accepted %q but the Decoder refused it: %v", b, err)
		}
		lenient, dup := decodeValid(b, true)
		require.Nil(t, dup, "%q", b)
		require.Equal(t, want, lenient, "%q", b)

		got, dup := decodeValid(b, false)
		key, at, found := duplicateReference(b)
		if !found {
			require.Nil(t, dup, "%q", b)
			require.Equal(t, want, got, "%q", b)
			return
		}
		require.NotNil(t, dup, "%q has the key %q twice at %s", b, key, at)
		require.Nil(t, got)
		require.Equal(t, key, dup.key, "%q", b)
		require.Equal(t, at, "/"+strings.Join(dup.at, "/"), "%q", b)
	})
}

// BenchmarkParseArgs is the per-call cost of checking and decoding a call's
// arguments; "decoder" is encoding/json's Decoder, which it replaced.
func BenchmarkParseArgs(b *testing.B) {
	args := []byte(`{"path":"src/main.go","limit":200,"pattern":"func (\\w+)","recursive":true}`)
	b.Run("decodeValid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ParseArgs(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeReference(args); err != nil {
				b.Fatal(err)
			}
		}
	})
}
