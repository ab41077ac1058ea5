package serve

import (
	"encoding/json"

	"github.com/ptcx/ptcx/api"
)

// Retained bytes. A tenant's executions hold results and events on this
// node — a live one its events, a settled one its events, value, text,
// logs and call records until it is evicted — counted against the
// tenant's budget (quotas.max_retained_bytes): a live execution's event
// past it is counted, not kept (as past server.max_events); a settled one
// makes the table evict the tenant's oldest settled executions, read or
// not, until the tenant is within it again (the newest is always kept).
// The count is of the bytes each holds, plus a fixed overhead per event
// and call record, not of the Go heap exactly.

// retainedOverhead is what an event or a call record is counted for
// besides its bytes: its struct, its id and type.
const retainedOverhead = 64

// chargeEvent counts an event of n bytes of data against the tenant's
// budget, and reports false, counting nothing, when the tenant's live
// executions hold the whole budget already. A nil tenant (tests) has no
// budget.
func (t *tenant) chargeEvent(n int) bool {
	if t == nil {
		return true
	}
	q := &t.quota
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.retainedLive+int64(n) > q.maxRetained {
		return false
	}
	q.retainedLive += int64(n)
	t.retainedGauge.Set(float64(q.retainedLive + q.retainedSettled))
	return true
}

// settleRetained moves x's bytes, its events' (live) and its result's, to
// the tenant's settled bytes, and returns the bytes x now holds.
func (t *tenant) settleRetained(live, result int64) int64 {
	q := &t.quota
	q.mu.Lock()
	defer q.mu.Unlock()
	q.retainedLive -= live
	q.retainedSettled += live + result
	t.retainedGauge.Set(float64(q.retainedLive + q.retainedSettled))
	return live + result
}

// overRetained reports whether the tenant holds more than its budget.
func (t *tenant) overRetained() bool {
	q := &t.quota
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.retainedLive+q.retainedSettled > q.maxRetained
}

// forgetRetained takes an evicted execution's bytes off the tenant's.
func (t *tenant) forgetRetained(n int64) {
	q := &t.quota
	q.mu.Lock()
	q.retainedSettled -= n
	t.retainedGauge.Set(float64(q.retainedLive + q.retainedSettled))
	q.mu.Unlock()
}

// resultBytes is what a settled execution's result and call records
// count for, its done event included.
func resultBytes(r api.Result, calls []CallRecord) int64 {
	n := int64(2*retainedOverhead + len(r.Value) + len(r.Text))
	if r.Err != nil {
		n += int64(len(r.Err.Message) + len(r.Err.Stack))
		for _, l := range r.Err.Logs {
			n += int64(len(l))
		}
	}
	for _, c := range calls {
		n += retainedOverhead + int64(len(c.ID)+len(c.Tool)+len(c.Code))
	}
	return n
}

// eventBytes is what an event of data counts for.
func eventBytes(data json.RawMessage) int { return retainedOverhead + len(data) }
