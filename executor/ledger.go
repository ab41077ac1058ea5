package executor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/resolve"
	"github.com/ptcx/ptcx/internal/text"
	"github.com/ptcx/ptcx/wasmhost"
)

// ledger collects the nested calls of one run as each finishes (phase 9,
// finish.go), from whichever goroutine finished it.
type ledger struct {
	mu      sync.Mutex
	calls   []api.LedgerCall
	args    [][]byte // the head of each call's arguments, summarised at report
	heads   []byte   // where args are copied: one allocation for many calls
	total   int
	omitted int
	cost    int64 // the calls' costs, summed
}

// summaryHead is the most bytes of a call's arguments the ledger keeps to
// summarise when it is read: recording a call of small arguments costs a
// copy of them. Larger arguments are summarised as the call is recorded
// (a pass over bytes the input schema's check already read).
const summaryHead = 512

// add records one finished nested call.
func (l *ledger) add(tool string, r api.Result, took time.Duration, args json.RawMessage, cost int64) {
	c := api.LedgerCall{Tool: tool, DurationMS: milliseconds(took), Cost: cost}
	if r.Err != nil {
		c.Code = r.Err.Code
	}
	if !r.Labels.IsZero() {
		lb := r.Labels
		c.Labels = &lb
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total++
	l.cost += cost
	if len(l.calls) >= api.MaxLedgerCalls {
		l.omitted++
		return
	}
	if len(args) > summaryHead { // made now: a head would cut a long value short
		c.Args = argsSummary(args)
		args = nil
	}
	l.calls = append(l.calls, c)
	if len(args) == 0 {
		l.args = append(l.args, nil)
		return
	}
	// A copy in heads: when heads grows, the earlier copies stay where
	// they are (nothing writes them again), so each is copied once.
	from := len(l.heads)
	l.heads = append(l.heads, args...)
	l.args = append(l.args, l.heads[from:len(l.heads):len(l.heads)])
}

// report returns the ledger with the run's measurements, stats: its
// compute time and its guest's memory, what a failed run used up to its
// failure too (zero for a run that failed before its program ran), and
// its wall time, unless wall is not zero: a failed run's is measured by
// the caller, from the program's start.
func (l *ledger) report(stats wasmhost.Stats, wall time.Duration) *api.Ledger {
	l.mu.Lock()
	defer l.mu.Unlock()
	if wall == 0 {
		wall = stats.Wall
	}
	r := &api.Ledger{Calls: append([]api.LedgerCall{}, l.calls...), Omitted: l.omitted,
		Stats: api.RunStats{ComputeMS: milliseconds(stats.Compute), WallMS: milliseconds(wall), Calls: l.total, MemoryBytes: stats.Memory, Cost: l.cost}}
	for i := range r.Calls {
		if l.args[i] != nil {
			r.Calls[i].Args = argsSummary(l.args[i])
		}
	}
	return r
}

func milliseconds(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// summaryKeys are the argument names a summary prefers, in order: what a
// reader of "write(notes.txt) ok" needs to tell one call from another.
var summaryKeys = []string{"path", "file", "name", "query", "pattern", "url", "id", "command"}

// argsSummary is a short summary of a call's arguments: the value of the first of summaryKeys that is
// a string, else the object's first string value, cut to
// api.MaxLedgerArgsBytes; empty when it has none in its head.
func argsSummary(head []byte) string {
	best, ok := flatSummaryValue(head)
	if !ok {
		best = decodedSummaryValue(head)
	}
	return text.Shorten(strings.Join(strings.Fields(best), " "), api.MaxLedgerArgsBytes-len(text.Ellipsis))
}

// flatSummaryValue is decodedSummaryValue for the common head, a small
// flat object whose strings need no decoding (`{"path":"a.txt","n":1}`),
// read in one pass by resolve.FlatStrings without the JSON decoder (which
// made the ledger's report cost about a microsecond per call). ok is false
// for anything else, which the decoder then reads.
func flatSummaryValue(head []byte) (best string, ok bool) {
	var first []byte
	rank := len(summaryKeys)
	ok = resolve.FlatStrings(head, func(key, value []byte) {
		if len(first) == 0 { // the first string not empty, as the decoder's reading takes it
			first = value
		}
		if r := slices.Index(summaryKeys, string(key)); r >= 0 && r < rank {
			best, rank = string(value), r
		}
	})
	if ok && best == "" {
		best = string(first)
	}
	return best, ok
}

// decodedSummaryValue is the string argsSummary summarises, read by the
// JSON decoder: any head, cut anywhere.
func decodedSummaryValue(head []byte) string {
	d := json.NewDecoder(bytes.NewReader(head))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	first, best, rank := "", "", len(summaryKeys)
	for depth := 0; ; {
		t, err := d.Token()
		if err != nil {
			break // the end of the head
		}
		if depth == 0 && t == json.Delim('}') {
			break
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
			continue
		case json.Delim('}'), json.Delim(']'):
			depth--
			continue
		}
		key, ok := t.(string)
		if depth > 0 || !ok {
			continue
		}
		v, err := d.Token() // the key's value
		if err != nil {
			break
		}
		switch v {
		case json.Delim('{'), json.Delim('['):
			depth++
		}
		s, ok := v.(string)
		if !ok {
			continue
		}
		if first == "" {
			first = s
		}
		if r := slices.Index(summaryKeys, key); r >= 0 && r < rank {
			best, rank = s, r
		}
	}
	if best == "" {
		best = first
	}
	return best
}

// ledgerTextCalls is the most calls a failure's text names.
const ledgerTextCalls = 30

// failureText is the line a failed run's text ends with, naming the calls
// it made: the model must not repeat what already happened.
func failureText(l *api.Ledger) string {
	if l.Stats.Calls == 0 {
		return "\nNo nested calls were made before the failure."
	}
	var b strings.Builder
	b.WriteString("\nCalls made before the failure: ")
	for i, c := range l.Calls {
		if i == ledgerTextCalls {
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		outcome := "ok"
		if c.Code != "" {
			outcome = string(c.Code)
		}
		fmt.Fprintf(&b, "%s(%s) %s", c.Tool, c.Args, outcome)
	}
	if more := l.Stats.Calls - min(len(l.Calls), ledgerTextCalls); more > 0 {
		fmt.Fprintf(&b, ", and %d more", more)
	}
	return b.String()
}
