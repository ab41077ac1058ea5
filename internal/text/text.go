// Package text cuts UTF-8 text to a size without splitting a character.
// Every bound on text the host shows (a log line, an error's excerpt, a
// tool's stderr, a key in a message) cuts with these functions. None of
// them allocates unless it appends a mark, and none of them panics, whatever
// the bytes: invalid UTF-8 is cut as bytes, never repaired. It imports
// only the standard library.
package text

import "unicode/utf8"

// Ellipsis marks where Shorten and ShortenRunes cut.
const Ellipsis = "…"

// Boundary returns the largest character boundary of s at or before i: i
// itself when s[i] starts a character (or i is len(s)), else the start of
// the character s[i] is in. i is first clamped to [0, len(s)]. A run of
// continuation bytes with no start before it (invalid UTF-8) gives 0.
func Boundary(s string, i int) int {
	i = min(max(i, 0), len(s))
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// Truncate returns the longest prefix of s that is at most n bytes and ends
// at a character boundary: s itself when it fits.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:Boundary(s, n)]
}

// Shorten is Truncate followed by Ellipsis when s was cut, so the result
// can be up to len(Ellipsis) bytes longer than n.
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Truncate(s, n) + Ellipsis
}

// Tail returns the longest suffix of s that is at most n bytes and starts at
// a character boundary: s itself when it fits.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - max(n, 0)
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// ShortenRunes returns the first n characters of s followed by Ellipsis,
// or s itself when it has at most n characters. An invalid byte counts as
// one character.
func ShortenRunes(s string, n int) string {
	count := 0
	for i := range s {
		if count >= n {
			return s[:i] + Ellipsis
		}
		count++
	}
	return s
}

// TrimIncomplete drops the last character of b when it is incomplete, as a
// cut at a byte count leaves it: b[:n] of valid UTF-8 becomes exactly
// Truncate's prefix. Bytes that are invalid for another reason are kept.
func TrimIncomplete(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}
