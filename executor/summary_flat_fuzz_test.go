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
		`{"a":"x"`, `{"a":1,}`, `[1]`, `{"a":"x"} trailing`, `{"n":1e}`, `{"n":-}`, `{"a" "x"}`,
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

// The flat reading takes the common heads, and leaves the others to the
// decoder.
func TestFlatSummaryValue_readsFlatObjectsOnly(t *testing.T) {
	for _, tt := range []struct {
		head, want string
		ok         bool
	}{
		{`{}`, "", true},
		{`{"i":7}`, "", true},
		{`{"content":"x","path":"a.txt"}`, "a.txt", true},
		{` { "n" : -1.5E-3 , "text" : "hi" , "b" : null } `, "hi", true},
		{`{"name":"b","path":"a","path":"c"}`, "a", true},
		{`{"a":"\u0041"}`, "", false},
		{`{"a":"é"}`, "", false},
		{`{"a":{"path":"x"}}`, "", false},
		{`{"a":"x"`, "", false},
		{`{"n":01}`, "", false},
	} {
		got, ok := flatSummaryValue([]byte(tt.head))
		require.Equal(t, tt.ok, ok, tt.head)
		require.Equal(t, tt.want, got, tt.head)
	}
}
