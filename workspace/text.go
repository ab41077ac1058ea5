package workspace

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ptcx/ptcx/internal/text"
)

// sniffBytes is how much of a file decides whether it is text.
const sniffBytes = 8 << 10

// looksBinary reports whether sample, the start of a file, is not text: it
// holds a NUL byte or invalid UTF-8. A rune cut off by the end of the
// sample does not count.
func looksBinary(sample []byte) bool {
	return bytes.IndexByte(sample, 0) >= 0 || !utf8.Valid(text.TrimIncomplete(sample))
}

// sniff returns the start of br's content without consuming it.
func sniff(br *bufio.Reader) ([]byte, error) {
	b, err := br.Peek(sniffBytes)
	if err == io.EOF || err == bufio.ErrBufferFull {
		err = nil
	}
	return b, err
}

// lineReader reads the lines of a file for read and grep, checking its
// context every checkBytes bytes and every checkLines lines, so a
// cancelled call stops promptly even inside one huge line.
type lineReader struct {
	ctx       context.Context
	br        *bufio.Reader
	buf       []byte // reused between lines
	lines     int    // lines read so far
	unchecked int    // bytes read since the context was last checked
}

func newLineReader(ctx context.Context, br *bufio.Reader) *lineReader {
	return &lineReader{ctx: ctx, br: br}
}

// next reads the next line, "\n" included when present. It keeps at most
// keep bytes of the line (in a buffer reused by the next call) and discards
// the rest; n is the line's full length. When stop > 0 it stops reading a
// line longer than stop bytes and reports n > stop without reading the
// rest: the caller must not read on. It returns io.EOF when no line is left
// and the context's error when it is done.
func (l *lineReader) next(keep, stop int) (kept []byte, n int, err error) {
	if l.lines%checkLines == 0 {
		if err := l.ctx.Err(); err != nil {
			return nil, 0, err
		}
	}
	kept = l.buf[:0]
	defer func() { l.buf = kept }()
	for {
		chunk, err := l.br.ReadSlice('\n')
		n += len(chunk)
		if room := keep - len(kept); room > 0 {
			kept = append(kept, chunk[:min(room, len(chunk))]...)
		}
		if l.unchecked += len(chunk); l.unchecked >= checkBytes {
			l.unchecked = 0
			if cerr := l.ctx.Err(); cerr != nil {
				return nil, n, cerr
			}
		}
		switch err {
		case nil:
			l.lines++
			return kept, n, nil
		case bufio.ErrBufferFull:
			if stop > 0 && n > stop {
				return kept, n, nil
			}
			continue
		case io.EOF:
			if n == 0 {
				return kept, 0, io.EOF
			}
			l.lines++
			return kept, n, nil
		default:
			return kept, n, err
		}
	}
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

// shown returns a file name as the model's text shows it: as it is, or
// quoted with Go's escapes (strconv.Quote) when it holds a character that
// is not printable (a newline or another control character, a bidi
// override), invalid UTF-8, or begins with a quote, so that a name can
// neither forge lines of a listing nor pass for a quoted one.
func shown(name string) string {
	if strings.HasPrefix(name, `"`) || !utf8.ValidString(name) {
		return strconv.Quote(name)
	}
	for _, r := range name {
		if r != ' ' && !strconv.IsPrint(r) {
			return strconv.Quote(name)
		}
	}
	return name
}
