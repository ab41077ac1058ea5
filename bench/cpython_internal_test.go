package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// pythonStr writes an answer's value as Python's print does, so that the
// native peer's output can be checked against the answers ptcx's are.
func TestPythonStr(t *testing.T) {
	for _, tt := range []struct{ answer, want string }{
		{"2", "2"},
		{"7.0", "7.0"},
		{"-1e-07", "-1e-07"},
		{"[7.0,12.0,5.0]", "[7.0, 12.0, 5.0]"},
		{`"3 orders, total 21.6, biggest B2"`, "3 orders, total 21.6, biggest B2"},
		{`"{\"grand\": 24.0, \"biggest\": \"B2\"}"`, `{"grand": 24.0, "biggest": "B2"}`},
		{`{"b":[true,false,null],"a":{}}`, "{'b': [True, False, None], 'a': {}}"},
		{`["it's", "say \"hi\"", "both ' \"", "a\\b\n\t\u0001", "é€😀", "\u00a0"]`,
			`["it's", 'say "hi"', 'both \' "', 'a\\b\n\t\x01', 'é€😀', '\xa0']`},
		{"[]", "[]"},
	} {
		got, err := pythonStr(tt.answer)
		require.NoError(t, err, tt.answer)
		require.Equal(t, tt.want, got, tt.answer)
	}
	for _, bad := range []string{"", "[1,", "1 2", "{"} {
		_, err := pythonStr(bad)
		require.Error(t, err, bad)
	}
}

// The native peer prints the program's last line, its final expression.
func TestPrintLast(t *testing.T) {
	require.Equal(t, "print(1 + 1)", printLast("1 + 1"))
	require.Equal(t, "x = 1\ndef f():\n    return x\nprint(f())", printLast("x = 1\ndef f():\n    return x\nf()"))
}
