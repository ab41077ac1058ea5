package text

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// "aé€😀": a (1 byte) at 0, é (2) at 1, € (3) at 3, 😀 (4) at 6; 10 bytes.
const mixed = "aé€😀"

func TestBoundary(t *testing.T) {
	tests := []struct {
		name string
		s    string
		i    int
		want int
	}{
		{"at a boundary", mixed, 3, 3},
		{"inside a 2-byte character", mixed, 2, 1},
		{"inside a 3-byte character, first continuation", mixed, 4, 3},
		{"inside a 3-byte character, last continuation", mixed, 5, 3},
		{"inside a 4-byte character, last continuation", mixed, 9, 6},
		{"at the end", mixed, 10, 10},
		{"past the end is clamped", mixed, 99, 10},
		{"negative is clamped", mixed, -1, 0},
		{"zero", mixed, 0, 0},
		{"empty", "", 3, 0},
		{"invalid: continuation bytes only", "\x80\x80\x80", 2, 0},
		{"invalid: a lone start byte is a boundary", "ab\xe2cd", 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Boundary(tt.s, tt.i))
		})
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"below the size", mixed, 11, mixed},
		{"at the size", mixed, 10, mixed},
		{"past the size, at a boundary", mixed, 6, "aé€"},
		{"past the size, one byte into a character", mixed, 7, "aé€"},
		{"past the size, the last byte of a character missing", mixed, 9, "aé€"},
		{"inside the first character", "é", 1, ""},
		{"zero", mixed, 0, ""},
		{"negative", mixed, -5, ""},
		{"ASCII", "abcdef", 3, "abc"},
		{"invalid: continuation bytes only", "\x80\x80\x80", 2, ""},
		{"invalid: stray continuations go with the character before them", "ab\x80\x80", 3, "a"},
		{"invalid: an incomplete last character is cut whole", "ab\xe2\x82", 3, "ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Truncate(tt.s, tt.n))
		})
	}
}

func TestShorten(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"below the size", mixed, 11, mixed},
		{"at the size", mixed, 10, mixed},
		{"past the size, at a boundary", mixed, 6, "aé€…"},
		{"past the size, inside a character", mixed, 8, "aé€…"},
		{"zero", "abc", 0, "…"},
		{"empty", "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Shorten(tt.s, tt.n))
		})
	}
}

func TestTail(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"below the size", mixed, 11, mixed},
		{"at the size", mixed, 10, mixed},
		{"past the size, at a boundary", mixed, 7, "€😀"},
		{"past the size, inside a character", mixed, 6, "😀"},
		{"past the size, inside the last character", mixed, 3, ""},
		{"zero", mixed, 0, ""},
		{"negative", mixed, -1, ""},
		{"ASCII", "abcdef", 2, "ef"},
		{"invalid: continuation bytes only", "\x80\x80\x80", 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Tail(tt.s, tt.n))
		})
	}
}

func TestShortenRunes(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"below the count", mixed, 5, mixed},
		{"at the count", mixed, 4, mixed},
		{"past the count", mixed, 3, "aé€…"},
		{"past the count by all", mixed, 0, "…"},
		{"empty", "", 0, ""},
		{"an invalid byte is one character", "a\xffb", 2, "a\xff…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, ShortenRunes(tt.s, tt.n))
		})
	}
}

func TestTrimIncomplete(t *testing.T) {
	tests := []struct {
		name string
		b    string
		want string
	}{
		{"complete", mixed, mixed},
		{"empty", "", ""},
		{"one byte of a 2-byte character", "a\xc3", "a"},
		{"two bytes of a 3-byte character", "aé\xe2\x82", "aé"},
		{"three bytes of a 4-byte character", "€\xf0\x9f\x98", "€"},
		{"invalid: a stray continuation is kept", "ab\x80", "ab\x80"},
		{"invalid: continuation bytes only are kept", "\x80\x80\x80\x80\x80", "\x80\x80\x80\x80\x80"},
		{"invalid: a start byte that can never be complete is kept", "a\xff", "a\xff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, string(TrimIncomplete([]byte(tt.b))))
		})
	}
}

// FuzzCut checks every function against its definition, for any bytes and
// any size.
func FuzzCut(f *testing.F) {
	for _, s := range []string{"", "abc", mixed, "\x80\x80", "ab\xe2\x82", strings.Repeat("😀", 5)} {
		for _, n := range []int{-1, 0, 1, 2, 3, 7, 20} {
			f.Add(s, n)
		}
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		b := Boundary(s, n)
		require.GreaterOrEqual(t, b, 0)
		require.LessOrEqual(t, b, min(max(n, 0), len(s)))
		require.True(t, b == 0 || b == len(s) || utf8.RuneStart(s[b]), "Boundary(%q, %d) = %d is not a boundary", s, n, b)
		for j := b + 1; j <= min(n, len(s)-1); j++ {
			require.False(t, utf8.RuneStart(s[j]), "Boundary(%q, %d) = %d, but %d is a later one", s, n, b, j)
		}

		tr := Truncate(s, n)
		require.True(t, strings.HasPrefix(s, tr))
		if len(s) <= n {
			require.Equal(t, s, tr)
		} else {
			require.Equal(t, s[:b], tr)
			require.Equal(t, tr+Ellipsis, Shorten(s, n))
		}

		tail := Tail(s, n)
		require.True(t, strings.HasSuffix(s, tail))
		require.LessOrEqual(t, len(tail), max(n, 0))
		if len(s) <= n {
			require.Equal(t, s, tail)
		} else if cut := len(s) - len(tail); cut < len(s) {
			require.True(t, utf8.RuneStart(s[cut]), "Tail(%q, %d) = %q starts inside a character", s, n, tail)
		}

		runes := ShortenRunes(s, n)
		if utf8.RuneCountInString(s) <= max(n, 0) {
			require.Equal(t, s, runes)
		} else {
			require.True(t, strings.HasSuffix(runes, Ellipsis))
			kept := strings.TrimSuffix(runes, Ellipsis)
			require.True(t, strings.HasPrefix(s, kept))
			require.Equal(t, max(n, 0), utf8.RuneCountInString(kept))
		}

		trimmed := TrimIncomplete([]byte(s))
		require.True(t, strings.HasPrefix(s, string(trimmed)))
		require.Less(t, len(s)-len(trimmed), utf8.UTFMax)
		if utf8.ValidString(s) {
			require.Equal(t, s, string(trimmed))
			for _, v := range []string{tr, tail, runes} {
				require.True(t, utf8.ValidString(v), "%q cut from valid %q is not valid", v, s)
			}
			k := min(max(n, 0), len(s))
			require.Equal(t, Truncate(s, k), string(TrimIncomplete([]byte(s[:k]))))
		}
	})
}
