package transpile

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLexer_scanPunct(t *testing.T) {
	for _, p := range []string{
		">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
		"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=",
		"*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>", "**",
		"?", "*", "&", "|", "=", "!", "<", ">", "+", "-", "%", "^", "~", "(", ".", ";", "@",
	} {
		require.Equal(t, p, newLexer(p+" x").scanPunct())
	}
	require.Equal(t, "?", newLexer("?.5:b").scanPunct(), "a conditional, not an optional chain")
	require.Equal(t, ".", newLexer("..a").scanPunct())
}

func TestLexer_next(t *testing.T) {
	tests := []struct {
		src   string
		slash slashMode
		kinds []tokKind
	}{
		{"a /b/ c", slashDivide, []tokKind{tkIdent, tkPunct, tkIdent, tkPunct, tkIdent}},
		{"/b/g c", slashRegex, []tokKind{tkRegex, tkIdent}},
		{"'a\\'b' \"c\"", slashRegex, []tokKind{tkString, tkString}},
		{"`a${", slashRegex, []tokKind{tkTemplateHead}},
		{"`a\\${b}`", slashRegex, []tokKind{tkTemplate}},
		{"1..a 0x1e-1 1e-5 .5 1_0n", slashRegex, []tokKind{tkNumber, tkPunct, tkIdent, tkNumber, tkPunct, tkNumber, tkNumber, tkNumber, tkNumber}},
		{"#a \\u0061b a\u00a0b", slashRegex, []tokKind{tkIdent, tkIdent, tkIdent, tkIdent}},
		{"a // c\u2028b /* \n */ c <!-- d\ne", slashRegex, []tokKind{tkIdent, tkIdent, tkIdent, tkIdent}},
	}
	for _, tt := range tests {
		lx := newLexer(tt.src)
		var kinds []tokKind
		for {
			lx.slash = tt.slash
			var tok token
			require.NoError(t, lx.next(&tok), tt.src)
			if tok.kind == tkEOF {
				break
			}
			kinds = append(kinds, tok.kind)
		}
		require.Equal(t, tt.kinds, kinds, tt.src)
	}
	lx := newLexer("\\u0061b")
	var tok token
	require.NoError(t, lx.next(&tok))
	require.Equal(t, "ab", tok.text, "escapes are decoded as esbuild names the identifier")
	require.True(t, tok.escaped)
}
