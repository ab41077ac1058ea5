package quota

import "sync"

// Gauge is where a count is shown (a prometheus.Gauge).
type Gauge interface{ Set(float64) }

// Retained is a tenant's retained bytes (quotas.max_retained_bytes): what
// its executions hold on a node — a live one its events, a settled one its
// events, value, text, logs and call records until the table forgets it —
// counted against its budget. A live execution's event past the budget is
// counted, not kept; a settled execution past it makes the table forget
// the tenant's oldest settled ones (the newest always kept) until the
// tenant is within it again. It is safe for concurrent use; a nil
// *Retained has no budget.
type Retained struct {
	mu      sync.Mutex
	max     int64
	live    int64 // the live executions' events
	settled int64 // the settled executions the table keeps
	gauge   Gauge
}

// NewRetained returns a budget of max bytes, shown on gauge.
func NewRetained(max int64, gauge Gauge) *Retained {
	return &Retained{max: max, gauge: gauge}
}

func (r *Retained) showLocked() { r.gauge.Set(float64(r.live + r.settled)) }

// ChargeEvent counts a live execution's event of n bytes, and reports
// false, counting nothing, when the tenant's live executions hold the
// whole budget already.
func (r *Retained) ChargeEvent(n int) bool {
	if r == nil {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live+int64(n) > r.max {
		return false
	}
	r.live += int64(n)
	r.showLocked()
	return true
}

// Settle moves an execution's bytes, live (its events') and result (its
// result's and call records'), to the settled ones, and returns what the
// execution holds now.
func (r *Retained) Settle(live, result int64) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live -= live
	r.settled += live + result
	r.showLocked()
	return live + result
}

// Over reports whether the tenant holds more than its budget.
func (r *Retained) Over() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live+r.settled > r.max
}

// Forget takes a forgotten execution's n bytes off the settled ones.
func (r *Retained) Forget(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settled -= n
	r.showLocked()
}
