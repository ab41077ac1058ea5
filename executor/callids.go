package executor

import (
	"strconv"
	"strings"
)

// callIDs makes the IDs of a run's nested calls ("<run's ID>:ptc:<n>"),
// several in one allocation: it writes the next few IDs into one string
// and hands out substrings of it, so that an awaited call does not pay an
// allocation for its ID. The batch grows with the run's calls (1, 2, 4,
// ... up to maxCallIDs), so a run of one call pays what it did before. An
// ID keeps its batch alive as long as something holds it: at most
// maxCallIDs IDs' worth of bytes.
//
// It is guarded by the scheduler's mu.
type callIDs struct {
	text  string          // the batch, the IDs one after another
	first int64           // the number of the first ID in text
	n     int             // how many IDs text holds
	ends  [maxCallIDs]int // where each ends in text
}

// maxCallIDs is the most IDs written in one batch.
const maxCallIDs = 16

// id returns the ID of call number num (from 1) of the run whose call ID
// is run. Numbers are usually consecutive; one outside the batch starts a
// new batch there.
func (c *callIDs) id(run string, num int64) string {
	if i := num - c.first; i >= 0 && i < int64(c.n) {
		from := 0
		if i > 0 {
			from = c.ends[i-1]
		}
		return c.text[from:c.ends[i]]
	}
	n := min(max(2*c.n, 1), maxCallIDs)
	var b strings.Builder
	b.Grow(n * (len(run) + len(":ptc:") + 20))
	var digits [20]byte
	for k := range n {
		b.WriteString(run)
		b.WriteString(":ptc:")
		b.Write(strconv.AppendInt(digits[:0], num+int64(k), 10))
		c.ends[k] = b.Len()
	}
	c.text, c.first, c.n = b.String(), num, n
	return c.text[:c.ends[0]]
}
