package shape

import (
	"fmt"
	"strings"

	"github.com/ptcx/ptcx/internal/text"
)

// logs returns the log lines within room bytes: the first lines that fit
// in half of it, a line counting the lines cut, and the last lines that fit
// in the rest. A line longer than a quarter of room is itself cut to its
// head and a count of its bytes.
func (c *cuts) logs(lines []string, room int) string {
	lineRoom := max(room/4, 64)
	shown := func(l string) string {
		if len(l) <= lineRoom {
			return l
		}
		head := text.Truncate(l, lineRoom-40)
		c.lineBytes += len(l) - len(head)
		return head + "… (" + count(len(l)-len(head), "more byte") + ")"
	}
	markerRoom := 80
	half := max((room-markerRoom)/2, 0)

	var head []string
	used := 0
	i := 0
	for ; i < len(lines); i++ {
		l := shown(lines[i])
		if used+len(l)+1 > half {
			break
		}
		head = append(head, l)
		used += len(l) + 1
	}
	var tail []string
	used = 0
	j := len(lines)
	for ; j > i; j-- {
		l := shown(lines[j-1])
		if used+len(l)+1 > half {
			break
		}
		tail = append(tail, l)
		used += len(l) + 1
	}
	var b strings.Builder
	for _, l := range head {
		b.WriteString(l)
		b.WriteString("\n")
	}
	if cut := j - i; cut > 0 {
		bytes := 0
		for _, l := range lines[i:j] {
			bytes += len(l) + 1
		}
		c.lines += cut
		c.lineBytes += bytes
		fmt.Fprintf(&b, "… %d log lines cut (%d bytes) …\n", cut, bytes)
	}
	for k := len(tail) - 1; k >= 0; k-- {
		b.WriteString(tail[k])
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}
