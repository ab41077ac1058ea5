package registry

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// renderReference is the model text Text.WriteValue must produce: what
// RenderText was before it was bounded, through json.Indent.
func renderReference(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "null"
	}
	if v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	var buf bytes.Buffer
	if json.Indent(&buf, v, "", "  ") != nil {
		return string(v)
	}
	return buf.String()
}

// nestedZeros is n zeros in an array nested depth arrays deep.
func nestedZeros(depth, n int) json.RawMessage {
	var b strings.Builder
	b.WriteString(strings.Repeat("[", depth))
	b.WriteString(strings.TrimSuffix(strings.Repeat("0,", n), ","))
	b.WriteString(strings.Repeat("]", depth))
	return json.RawMessage(b.String())
}

var renderSamples = []string{
	``, `  `, `{"a":{},"b":[],"c":[{}],"d":{"e":[[]]}}`, `[ 1 , [ 2 , { "k" : "v" , "w" : [ ] } ] ]`,
	`{"s":"with [brackets], {braces}: and \"quotes\" \\"}`, `not json {`, `[1,2`, `"\ud83d\ude00 é"`,
	string(nestedZeros(99, 50)),
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e300`, `-12.25E-3`, `123456789012345678901234567890`,
	`""`, `"plain"`, `"tab\tquote\"backslash\\slash\/"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, "\"caf\xc3\xa9\"",
	"\"bad \xff utf8\"", "\"\xed\xa0\x80\"", ` { "k" : [ 1 , { "n" : null } , "s" ] } `,
	`{"nested":{"deep":[[[[{"x":[true,false,null]}]]]]}}`, `[1,-2,3.0,4e5,"x",{"y":[]}]`, "\t\n\r [ ] \n",
	`{"":""}`, `{"a\u0000b":"\u0000"}`, `{"a":1,"b":{"a":2},"c":[{"a":3},{"b":4}]}`,
}

func TestText_WriteValue_matchesJSONIndent(t *testing.T) {
	for _, s := range renderSamples {
		txt := NewText(1 << 20)
		txt.WriteValue(json.RawMessage(s))
		want := renderReference(json.RawMessage(s))
		require.Equal(t, want, txt.String(), s)
		require.Equal(t, len(want), txt.Size(), s)
		require.False(t, txt.Over(), s)
	}
}

// At its limit a Text keeps everything; one byte past it, it keeps the
// limit's worth, cut at a character boundary, and still counts the whole.
func TestText_String_atBelowAndPastTheLimit(t *testing.T) {
	const s = "abcé" // 5 bytes; é is two
	for _, tt := range []struct {
		limit int
		over  bool
		kept  string
	}{
		{6, false, s},
		{5, false, s},
		{4, true, "abc"}, // the cut would split é
		{3, true, "abc"},
		{1, true, "a"},
		{0, true, ""},
	} {
		txt := NewText(tt.limit)
		txt.WriteString(s)
		require.Equal(t, tt.over, txt.Over(), "limit %d", tt.limit)
		require.Equal(t, tt.kept, txt.String(), "limit %d", tt.limit)
		require.Equal(t, len(s), txt.Size(), "limit %d", tt.limit)
	}
}

// The indentation past the limit is counted, not built: the size is exact
// and the bytes kept are the indented text's first limit bytes.
func TestText_WriteValue_pastTheLimitCountsExactly(t *testing.T) {
	v := nestedZeros(99, 2000)
	want := renderReference(v)
	for _, limit := range []int{len(want) + 1, len(want), len(want) - 1, 1000, 150, 1, 0} {
		txt := NewText(limit)
		txt.WriteValue(v)
		require.Equal(t, len(want), txt.Size(), "limit %d", limit)
		require.Equal(t, len(want) > limit, txt.Over(), "limit %d", limit)
		require.Equal(t, want[:min(limit, len(want))], txt.String(), "limit %d", limit)
	}
}

// A 1 MiB value nested 99 deep is 104 MB indented; rendering it under a
// 1 MiB limit allocates a few times the limit, not the indented size.
func TestText_WriteValue_deepValueCostsTheLimitNotItsIndentedSize(t *testing.T) {
	const limit = 1 << 20
	v := nestedZeros(99, (limit-2*99)/2)
	require.LessOrEqual(t, len(v), limit)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	txt := NewText(limit)
	txt.WriteValue(v)
	runtime.ReadMemStats(&after)
	require.True(t, txt.Over())
	require.Greater(t, txt.Size(), 100_000_000, "the indented text is about 104 MB")
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16*limit), "allocated while rendering")

	text := RenderText(v, limit)
	require.Equal(t, string(v), text, "over the limit, RenderText shows the value unindented")
}

func TestRenderText_indentsWithinTheLimit(t *testing.T) {
	for _, tt := range []struct {
		v     string
		limit int
		want  string
	}{
		{`"hello\nworld"`, 1, "hello\nworld"}, // a string is never longer than its JSON
		{`{"a":1}`, 1 << 20, "{\n  \"a\": 1\n}"},
		{`{"a":1}`, 12, "{\n  \"a\": 1\n}"}, // exactly the indented size
		{`{"a":1}`, 11, `{"a":1}`},          // one byte short: the value as it is
		{` {"a":1} `, 0, `{"a":1}`},
		{``, 0, "null"},
		{` 42 `, 0, "42"},
	} {
		require.Equal(t, tt.want, RenderText(json.RawMessage(tt.v), tt.limit), "%s within %d", tt.v, tt.limit)
	}
}

func FuzzText_WriteValue(f *testing.F) {
	for _, s := range renderSamples {
		f.Add([]byte(s), 10)
	}
	f.Fuzz(func(t *testing.T, b []byte, limit int) {
		limit = max(limit, 0) % (2*len(b) + 16)
		want := renderReference(b)
		txt := NewText(limit)
		txt.WriteValue(b)
		require.Equal(t, len(want), txt.Size(), "%q", b)
		require.Equal(t, len(want) > limit, txt.Over(), "%q", b)
		if !txt.Over() {
			require.Equal(t, want, txt.String(), "%q", b)
			return
		}
		kept := txt.String()
		require.True(t, strings.HasPrefix(want, kept), "%q: %q is not a prefix of %q", b, kept, want)
		require.LessOrEqual(t, len(kept), limit)
		require.Greater(t, len(kept), limit-4, "%q: only an incomplete character is dropped", b)
	})
}
