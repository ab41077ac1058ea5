package wasmhost

import "unicode/utf8"

// output counts what a run writes against Limits.OutputBytes: every console
// line with its newline, then the result's JSON.
type output struct {
	limit int
	used  int
	lines []string
}

// log appends prefix+text as one line and reports whether it fitted. When
// it does not, the part of it that fits (cut at a character boundary) is
// kept, so the logs are the prefix of the output that fits the limit.
func (o *output) log(prefix string, text []byte) bool {
	n := len(prefix) + len(text)
	if o.used+n+1 <= o.limit {
		o.lines = append(o.lines, prefix+string(text))
		o.used += n + 1
		return true
	}
	if room := o.limit - o.used - 1; room > 0 {
		line := append([]byte(prefix), text[:min(len(text), room)]...)[:room]
		line = cutToRune(line)
		if len(line) > 0 {
			o.lines = append(o.lines, string(line))
			o.used += len(line) + 1
		}
	}
	return false
}

// fits reports whether n more bytes fit the limit.
func (o *output) fits(n int) bool { return o.used+n <= o.limit }

// cutToRune drops a last character that the cut left incomplete.
func cutToRune(b []byte) []byte {
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
