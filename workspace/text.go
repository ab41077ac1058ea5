package workspace

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"unicode/utf8"
)

// sniffBytes is how much of a file decides whether it is text.
const sniffBytes = 8 << 10

// looksBinary reports whether sample, the start of a file, is not text: it
// holds a NUL byte or invalid UTF-8. A rune cut off by the end of the
// sample does not count.
func looksBinary(sample []byte) bool {
	return bytes.IndexByte(sample, 0) >= 0 || !utf8.Valid(trimPartialRune(sample))
}

// sniff returns the start of br's content without consuming it.
func sniff(br *bufio.Reader) ([]byte, error) {
	b, err := br.Peek(sniffBytes)
	if err == io.EOF || err == bufio.ErrBufferFull {
		err = nil
	}
	return b, err
}

// nextLine reads the next line of br, "\n" included when present. It keeps
// at most keep bytes of the line in buf (reused) and discards the rest; n is
// the line's full length. It returns io.EOF when no line is left.
func nextLine(br *bufio.Reader, keep int, buf []byte) (kept []byte, n int, err error) {
	kept = buf[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if room := keep - len(kept); room > 0 {
			kept = append(kept, chunk[:min(room, len(chunk))]...)
		}
		switch err {
		case nil:
			return kept, n, nil
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			if n == 0 {
				return kept, 0, io.EOF
			}
			return kept, n, nil
		default:
			return kept, n, err
		}
	}
}

// clip returns s cut to at most max runes, marking a cut with "…".
func clip(s string, max int) string {
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// trimPartialRune drops an incomplete rune at the end of b (left by a cut).
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && len(b)-i <= utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// size renders a byte count for messages: "512 bytes", "256 KiB", "1.5 MiB".
func size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return trimZero(float64(n)/(1<<10)) + " KiB"
	case n < 1<<30:
		return trimZero(float64(n)/(1<<20)) + " MiB"
	}
	return trimZero(float64(n)/(1<<30)) + " GiB"
}

func trimZero(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}
