package wasmhost

import (
	"encoding/json"

	"github.com/ptcx/ptcx/internal/text"
)

// output counts what a run writes against Limits.OutputBytes exactly as the
// model will see it: the console lines joined by newlines, then, after one
// more newline, the result (a string raw, anything else as JSON; the
// executor renders objects indented and checks that text again).
type output struct {
	limit int
	used  int
	lines []string
}

// sep is the size of the newline that separates the next part from the
// ones before it.
func (o *output) sep() int {
	if len(o.lines) == 0 {
		return 0
	}
	return 1
}

// log appends prefix+text as one line and reports whether it fitted. When
// it does not, the part of it that fits (cut at a character boundary) is
// kept, so the logs are the prefix of the output that fits the limit.
func (o *output) log(prefix string, msg []byte) bool {
	sep := o.sep()
	n := sep + len(prefix) + len(msg)
	if o.used+n <= o.limit {
		o.lines = append(o.lines, prefix+string(msg))
		o.used += n
		return true
	}
	if room := o.limit - o.used - sep; room > 0 {
		line := append([]byte(prefix), msg[:min(len(msg), room)]...)[:room]
		line = text.TrimIncomplete(line)
		if len(line) > 0 {
			o.lines = append(o.lines, string(line))
			o.used += sep + len(line)
		}
	}
	return false
}

// fitsResult reports whether a result shown in n bytes fits after the logs.
func (o *output) fitsResult(n int) bool { return o.used+o.sep()+n <= o.limit }

// shownSize is the size of a result as the model sees it: a JSON string
// raw, anything else as its JSON.
func shownSize(result []byte) int {
	if len(result) > 0 && result[0] == '"' {
		var s string
		if json.Unmarshal(result, &s) == nil {
			return len(s)
		}
	}
	return len(result)
}
