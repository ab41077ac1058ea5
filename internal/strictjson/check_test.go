package strictjson_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/strictjson"
)

func TestCheck_accepts(t *testing.T) {
	manyKeys := func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"k%d":%d`, i, i)
		}
		return b.String() + "}"
	}
	tests := []struct{ name, json string }{
		{"scalars", `[1, -0.5, 2e10, 1E-400, 0, "s", true, false, null]`},
		{"space around", " \t\r\n{}\n "},
		{"the same key in sibling objects", `[{"a":1},{"a":2},{"b":{"a":3}}]`},
		{"the same key at two depths", `{"a":{"a":{"a":1}}}`},
		{"keys that differ only once decoded differently", `{"a":1,"\u0062":2,"\\u0061":3}`},
		{"a surrogate pair", `"\ud83d\ude00 and 😀"`},
		{"a literal U+FFFD and its escape", "\"\ufffd \\ufffd\""},
		{"every escape", `"\" \\ \/ \b \f \n \r \t \u00e9"`},
		{"the largest float64", `[1.7976931348623157e308, -1.7976931348623157e308]`},
		{"a long integer below 1e308", `[` + strings.Repeat("9", 308) + `]`},
		{"an object at the scan bound", manyKeys(16)},
		{"an object past the scan bound", manyKeys(200)},
		{"nesting at the limit", strings.Repeat("[", strictjson.MaxDepth) + strings.Repeat("]", strictjson.MaxDepth)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.True(t, json.Valid([]byte(tt.json)))
			require.NoError(t, strictjson.Check([]byte(tt.json)))
		})
	}
}

func TestCheck_refuses(t *testing.T) {
	manyKeysTwice := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"o":{`)
		for i := range n {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		return b.String() + `"k7":0}}`
	}
	tests := []struct {
		name, json   string
		line, column int
		path, want   string
	}{
		{"a duplicate top-level key", `{"code": "return 'first'", "code": "return 'second'"}`,
			1, 28, "code", `the key "code" appears twice in its object`},
		{"a duplicate deep key", "{\"results\":[{\"id\":\"c1\",\"value\":{\"a\":{\"b\":1,\n \"b\":2}}}]}",
			2, 2, "results[0].value.a.b", `the key "b" appears twice`},
		{"a duplicate spelled with an escape", `{"a":1,"\u0061":2}`, 1, 8, "a", `the key "a" appears twice`},
		{"a duplicate in a large object", manyKeysTwice(40), 1, 347, "o.k7", `the key "k7" appears twice`},
		{"a duplicate key that needs quoting", `{"x":{"content-type":1,"content-type":2}}`, 1, 24, `x["content-type"]`, "appears twice"},
		{"invalid UTF-8", "{\"code\":\"return '\xff'\"}", 1, 18, "code", "not UTF-8 (byte 0xff)"},
		{"an encoded surrogate", "[\"\xed\xa0\x80\"]", 1, 3, "[0]", "not UTF-8"},
		{"invalid UTF-8 in a key", "{\"a\":{\"k\xc3\":1}}", 1, 9, "a", "not UTF-8"},
		{"a lone high surrogate", `{"code":"\ud800"}`, 1, 10, "code", `a lone surrogate, \ud800`},
		{"a lone low surrogate", `["x", "\udc00"]`, 1, 8, "[1]", `a lone surrogate, \udc00`},
		{"a high surrogate before another escape", `["\ud800\u0041"]`, 1, 3, "[0]", "lone surrogate"},
		{"a high surrogate at the end", `["a\ud800"]`, 1, 4, "[0]", "lone surrogate"},
		{"a lone surrogate in a key", `{"\udbff":1}`, 1, 3, "", "lone surrogate"},
		{"a number out of range", `{"results":[{"value":1e400}]}`, 1, 22, "results[0].value", "the number 1e400 is out of range"},
		{"a negative number out of range", `[-1.8e308]`, 1, 2, "[0]", "out of range"},
		{"a long integer past 1.8e308", `[` + strings.Repeat("9", 309) + `]`, 1, 2, "[0]", "out of range"},
		{"nesting past the limit", strings.Repeat("[", strictjson.MaxDepth+1) + strings.Repeat("]", strictjson.MaxDepth+1),
			1, strictjson.MaxDepth + 1, strings.Repeat("[0]", strictjson.MaxDepth)[:200] + "…", "deeper than 1000 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := strictjson.Check([]byte(tt.json))
			var e *strictjson.Error
			require.ErrorAs(t, err, &e)
			require.False(t, e.Syntax, "%v", err)
			require.Equal(t, tt.path, e.Path)
			require.Equal(t, [2]int{tt.line, tt.column}, [2]int{e.Line, e.Column}, "%v", err)
			require.Contains(t, e.Problem, tt.want)
			require.Contains(t, err.Error(), fmt.Sprintf("line %d, column %d: ", tt.line, tt.column))
		})
	}
}

func TestCheck_syntax(t *testing.T) {
	tests := []struct{ name, json, want string }{
		{"empty", ``, "ends before its value"},
		{"space only", "  \n", "ends before its value"},
		{"truncated", `{"code":`, "ends before its value"},
		{"truncated string", `{"code":"ret`, "ends inside a string"},
		{"trailing data", `{} {}`, "data after the JSON value"},
		{"trailing comma", `[1,]`, "want a JSON value"},
		{"missing colon", `{"a" 1}`, "want ':'"},
		{"a key that is not a string", `{a:1}`, "want a key"},
		{"a leading zero", `[01]`, "want ',' or the end of the array"},
		{"a bare minus", `[-]`, "without digits"},
		{"a bare point", `[1.]`, "after its decimal point"},
		{"a bare exponent", `[1e+]`, "in its exponent"},
		{"a control character", "[\"a\tb\"]", "control character (0x09)"},
		{"a bad escape", `["\x"]`, `invalid escape "\\x"`},
		{"a short unicode escape", `["\u12"]`, "four hexadecimal digits"},
		{"a short second half", `["\ud800\u12"]`, "four hexadecimal digits"},
		{"a misspelled literal", `[nul]`, "want a JSON value"},
		{"a closing mismatch", `[1}`, "want ',' or the end of the array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.False(t, json.Valid([]byte(tt.json)))
			err := strictjson.Check([]byte(tt.json))
			var e *strictjson.Error
			require.ErrorAs(t, err, &e)
			require.True(t, e.Syntax, "%v", err)
			require.Contains(t, e.Problem, tt.want)
		})
	}
}
