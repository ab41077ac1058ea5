package executor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzFlatSummaryValue checks that whatever head the flat reading of a
// summary takes, it gives what the JSON decoder gives.
func FuzzFlatSummaryValue(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"path":"a.txt"}`, `{"content":"x","path":"a.txt"}`, `{"n":1,"text":"hello   world"}`,
		`{"n":-0.5e+3,"q":"x","query":"y"}`, `{"a":true,"b":false,"c":null,"d":"z"}`, ` { "id" : "7" } `,
		`{"path":"a","path":"b"}`, `{"n":01}`, `{"n":1.}`, `{"a":"\u0041"}`, `{"a":"é"}`, `{"a":{"path":"x"}}`,
		`{"a":"x"`, `{"a":1,}`, `{"a":"","b":"x"}`, `{"path":"","name":"x"}`, `{"a":"\xff"}`, `[1]`, `{"a":"x"} trailing`, `{"n":1e}`, `{"n":-}`, `{"a" "x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		got, ok := flatSummaryValue(head)
		if !ok {
			return
		}
		if want := decodedSummaryValue(head); got != want {
			t.Fatalf("%q: flat %q, decoder %q", head, got, want)
		}
	})
}

// The flat reading takes the common heads (resolve's flat objects whose
// strings need no decoding), and leaves the others to the decoder: an
// escape, bytes that are not UTF-8, a key twice, nesting, more than
// resolve's eight fields, a head cut short, leading zeros.
func TestFlatSummaryValue_readsFlatObjectsOnly(t *testing.T) {
	for _, tt := range []struct {
		head, want string
		ok         bool
	}{
		{`{}`, "", true},
		{`{"i":7}`, "", true},
		{`{"content":"x","path":"a.txt"}`, "a.txt", true},
		{` { "n" : -1.5E-3 , "text" : "hi" , "b" : null } `, "hi", true},
		{`{"a":"","b":"x"}`, "x", true},
		{`{"path":"","name":"x"}`, "x", true},
		{`{"a":"é"}`, "é", true},
		{`{"name":"b","path":"a","path":"c"}`, "", false},
		{`{"a":"\u0041"}`, "", false},
		{"{\"a\":\"\xff\"}", "", false},
		{`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"path":"x"}`, "", false},
		{`{"a":{"path":"x"}}`, "", false},
		{`{"a":"x"`, "", false},
		{`{"n":01}`, "", false},
	} {
		got, ok := flatSummaryValue([]byte(tt.head))
		require.Equal(t, tt.ok, ok, tt.head)
		require.Equal(t, tt.want, got, tt.head)
	}
}
