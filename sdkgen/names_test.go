package sdkgen

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"line\nbreak\r\ttab", `"line\nbreak\r\ttab"`},
		{"ctl\x00\x1f\x7f", `"ctl\u0000\u001f\u007f"`},
		{"sep\u2028\u2029", `"sep\u2028\u2029"`},
		{"nbsp\u00a0", `"nbsp\u00a0"`},
		{"日本 😀", `"日本 😀"`},
		{"private \U000F0000", `"private \udb80\udc00"`},
		{"bad \xff utf8", "\"bad \uFFFD utf8\""},
		{"*/ stays", `"*/ stays"`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got := quote(tc.in)
			require.Equal(t, tc.want, got)
			var back string
			require.NoError(t, json.Unmarshal([]byte(got), &back), "a quoted string is also valid JSON")
		})
	}
}

func TestIsIdentifier(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"read", true}, {"_x", true}, {"$y", true}, {"a1", true}, {"delete", true}, {"class", true},
		{"", false}, {"1a", false}, {"a-b", false}, {"a.b", false}, {"a b", false}, {"日本", false}, {`a"`, false},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, isIdentifier(tc.in), tc.in)
	}
}

func TestTypePrefix(t *testing.T) {
	tests := []struct{ in, want string }{
		{"write", "Write"}, {"write_file", "WriteFile"}, {"write.file", "WriteFile"}, {"readFile", "ReadFile"},
		{"HTTP-get", "HTTPGet"}, {"3d", "Tool3d"}, {"...", "Tool"}, {"日本", "Tool"}, {"a日b", "AB"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, typePrefix(tc.in), tc.in)
	}
}

func TestNameTable_alloc(t *testing.T) {
	names := newNameTable(reservedNames())
	require.Equal(t, "WriteArgs", names.alloc("WriteArgs"))
	require.Equal(t, "WriteArgs2", names.alloc("WriteArgs"))
	require.Equal(t, "WriteArgs3", names.alloc("WriteArgs"))
	require.Equal(t, "ArrayBuffer2", names.alloc("ArrayBuffer"), "library globals are taken")
	require.Equal(t, "ToolName2", names.alloc("ToolName"), "the block's own names are taken")
}

func TestCommentText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"  Reads\n\n\ta   file.  ", "Reads a file."},
		{"closes */ early", `closes *\/ early`},
		{"*/*/", `*\/*\/`},
		{"bell\x07 esc\x1b[0m nul\x00", "bell esc[0m nul"},
		{"line\u2028sep\u2029para\u0085nel", "line sep para nel"},
		{"bidi \u202eevil\u202c \u2066x\u2069", "bidi evil x"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{"\n\t ", ""},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, commentText(tc.in), "%q", tc.in)
	}
	require.Equal(t, "", docComment(" \n "))
	require.Equal(t, "/** One line. */", docComment("One\nline."))
}

func TestInlineComment_truncates(t *testing.T) {
	long := ""
	for i := 0; i < 50; i++ {
		long += "word "
	}
	got := inlineComment(long)
	require.Equal(t, len("/* ")+120+len(" */")+1, utf8.RuneCountInString(got), "120 runes of text, an ellipsis, the delimiters")
	require.Contains(t, got, "…")
	require.Equal(t, "/* a *\\/ b */", inlineComment("a */ b"))
}
