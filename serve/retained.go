package serve

import (
	"encoding/json"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/serve/internal/quota"
)

// Retained bytes. A tenant's executions hold results and events on this
// node, counted against the tenant's budget (quotas.max_retained_bytes,
// serve/internal/quota.Retained): a live execution's event past it is
// counted, not kept (as past server.max_events); a settled one makes the
// table evict the tenant's oldest settled executions, read or not, until
// the tenant is within it again (the newest is always kept). The count is
// of the bytes each holds, plus a fixed overhead per event and call
// record, not of the Go heap exactly; what each counts for is below.

// retainedOverhead is what an event or a call record is counted for
// besides its bytes: its struct, its id and type.
const retainedOverhead = 64

// retained is x's tenant's budget; nil for an execution without a
// tenant (tests), which has none.
func (x *execution) retained() *quota.Retained {
	if x.tenant == nil {
		return nil
	}
	return x.tenant.retained
}

// file files x, settled at at with result r, in the table: its bytes, its
// events' (live) and its result's, become its tenant's settled ones, and
// the table evicts what is past the retention, over the count or over the
// tenant's retained bytes.
func (s *Server) file(x *execution, at time.Time, r api.Result) {
	b := x.tenant.retained
	s.table.Settle(x, at, b, func() int64 {
		x.mu.Lock()
		defer x.mu.Unlock()
		x.filed = true
		x.bytes = b.Settle(x.bytes, resultBytes(r, x.calls))
		return x.bytes
	})
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
	for _, h := range r.Handles { // their values are retained with the result (handles.go)
		n += retainedOverhead + int64(len(h.ID)+len(h.Tool)+len(h.Value))
	}
	return n
}

// eventBytes is what an event of data counts for.
func eventBytes(data json.RawMessage) int { return retainedOverhead + len(data) }
