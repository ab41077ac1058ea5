package cli

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"time"
)

// batchSummary counts a batch's runs as they are written: by outcome, their
// latency (in a histogram: flat memory whatever the batch's size) and, with
// --repeat, whether each item's runs agree.
type batchSummary struct {
	mu       sync.Mutex
	repeat   int
	runs     int
	earlier  int // runs found in --out by --resume
	badLines int
	outcomes map[string]int
	latency  histogram
	open     map[string]*agreement // items whose runs are not all in
	items    int
	agreed   int // items whose runs all gave the same result
	allOK    int // items whose runs all succeeded (pass^k)
}

type agreement struct {
	first [32]byte
	n     int
	same  bool
	allOK bool
}

func newBatchSummary(repeat int) *batchSummary {
	return &batchSummary{repeat: repeat, outcomes: map[string]int{}, open: map[string]*agreement{}}
}

// fingerprint is what two runs of an item must share to agree: success,
// text, value and error.
func fingerprint(l batchLine) [32]byte {
	b, _ := json.Marshal(struct {
		OK    bool
		Text  string
		Value json.RawMessage
		Error any
	}{l.OK, l.Text, l.Value, l.Error})
	return sha256.Sum256(b)
}

// add counts one run; took < 0 marks a run of an earlier batch (--resume).
func (s *batchSummary) add(id string, fp [32]byte, outcome string, took time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs++
	s.outcomes[outcome]++
	if took < 0 {
		s.earlier++
	} else {
		s.latency.add(took)
	}
	if s.repeat < 2 {
		return
	}
	a := s.open[id]
	if a == nil {
		a = &agreement{first: fp, same: true, allOK: true}
		s.open[id] = a
	}
	a.n++
	a.same = a.same && a.first == fp
	a.allOK = a.allOK && outcome == "ok"
	if a.n == s.repeat {
		delete(s.open, id)
		s.items++
		if a.same {
			s.agreed++
		}
		if a.allOK {
			s.allOK++
		}
	}
}

func (s *batchSummary) bad() {
	s.mu.Lock()
	s.badLines++
	s.mu.Unlock()
}

func (s *batchSummary) print(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "ptcx batch: %d runs", s.runs)
	if s.earlier > 0 {
		fmt.Fprintf(&b, " (%d from the earlier batch, --resume)", s.earlier)
	}
	fmt.Fprintf(&b, ", %d malformed lines skipped\n", s.badLines)
	names := make([]string, 0, len(s.outcomes))
	for k := range s.outcomes {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s %d", k, s.outcomes[k])
	}
	fmt.Fprintf(&b, "  outcomes: %s\n", strings.Join(parts, ", "))
	if s.latency.n > 0 {
		fmt.Fprintf(&b, "  latency: p50 %v, p90 %v, p99 %v (%d runs of this batch)\n",
			s.latency.quantile(0.5), s.latency.quantile(0.9), s.latency.quantile(0.99), s.latency.n)
	}
	if s.repeat > 1 {
		fmt.Fprintf(&b, "  pass^%d: %d items complete, %d agree (all %d runs equal), %d pass (all %d runs ok), %d incomplete\n",
			s.repeat, s.items, s.agreed, s.repeat, s.allOK, s.repeat, len(s.open))
	}
	io.WriteString(w, b.String())
}

// histogram holds durations in buckets 1% apart, from 1 µs to about 3
// hours: quantiles within 1%, in a fixed 2 k buckets.
type histogram struct {
	counts [histBuckets]int64
	n      int64
}

const histBuckets = 2100

var histGrowth = math.Log(1.01)

func (h *histogram) add(d time.Duration) {
	us := float64(d) / float64(time.Microsecond)
	i := 0
	if us > 1 {
		i = min(int(math.Log(us)/histGrowth)+1, histBuckets-1)
	}
	h.counts[i]++
	h.n++
}

// quantile returns the upper bound of the bucket holding quantile q.
func (h *histogram) quantile(q float64) time.Duration {
	rank := int64(math.Ceil(q * float64(h.n)))
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank && c > 0 {
			us := math.Exp(float64(i) * histGrowth)
			return time.Duration(us * float64(time.Microsecond)).Round(10 * time.Microsecond)
		}
	}
	return 0
}
