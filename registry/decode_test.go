package registry

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
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

var decodeSamples = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e300`, `-12.25E-3`, `123456789012345678901234567890`,
	`""`, `"plain"`, `"tab\tquote\"backslash\\slash\/"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, "\"caf\xc3\xa9\"",
	"\"bad \xff utf8\"", "\"\xed\xa0\x80\"", `{"a":1,"a":2}`, ` { "k" : [ 1 , { "n" : null } , "s" ] } `,
	`{"nested":{"deep":[[[[{"x":[true,false,null]}]]]]}}`, `[1,-2,3.0,4e5,"x",{"y":[]}]`, "\t\n\r [ ] \n",
	`{"":""}`, `{"a\u0000b":"\u0000"}`,
}

func TestDecodeValid_matchesEncodingJSON(t *testing.T) {
	for _, s := range decodeSamples {
		want, err := decodeReference([]byte(s))
		require.NoError(t, err, s)
		require.Equal(t, want, decodeValid([]byte(s)), s)
	}
}

func TestParseJSON_invalidInputKeepsTheDecodersErrors(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":}`:    "invalid character '}' looking for beginning of value",
		`{"a":1} x`: "unexpected data after the JSON value",
		`{"a":1`:    "unexpected EOF",
		``:          "EOF",
	} {
		_, err := parseJSON([]byte(in))
		require.ErrorContains(t, err, want, in)
	}
}

func FuzzDecodeValid(f *testing.F) {
	for _, s := range decodeSamples {
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
		require.Equal(t, want, decodeValid(b), "%q", b)
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
