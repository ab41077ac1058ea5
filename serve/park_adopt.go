package serve

import (
	"context"
	"encoding/json"
	"math"
	"time"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/serve/internal/cluster"
)

// Parked executions this node holds from another's bytes: the node's side
// of a takeover (internal/cluster/takeover.go claims the record and reads the
// bytes; this file rebuilds the execution from them and holds it).

// adoptParked rebuilds the parked execution r names from its bytes, data,
// given the answers its record carries, to run here under epoch: checked
// to be the execution's own (parkfile.go belongsTo, holds) and its program
// restored. after is the last event id published (its events numbered on
// from its owner's, read from feed). It is not held yet (holdAdopted);
// an error means the bytes are not the execution's own, or it cannot
// continue here.
func (s *Server) adoptParked(ctx context.Context, id, tenant, snapshot string, data []byte, given map[int32]ToolResult,
	epoch uint64, feed cluster.EventsFeed) (x *execution, after int, err error) {
	pf, err := decodeParkFile(data)
	if err == nil {
		err = pf.belongsTo(id, tenant, snapshot, data)
	}
	if err != nil {
		return nil, 0, err
	}
	m := pf.meta
	x = newExecution(id, s.tenantNamed(tenant), nil, m.Key, true, s.cfg.maxEvents())
	copy(x.sum[:], m.Sum)
	x.created, x.spec, x.calls, x.callCount = m.Created, m.Spec, m.Calls, m.CallCount
	x.snapshot, x.status, x.parkedSize = snapshot, StatusPending, int64(len(data))
	x.answers, x.given = map[int32]executor.Answer{}, map[int32]ToolResult{}
	x.cancel = func() {}
	x.SetEpoch(epoch)
	after = s.carryEvents(ctx, x, m, len(given), feed)
	p, herr, err := s.restoreFrom(x, pf)
	if err != nil {
		if x.releasePending != nil {
			x.releasePending()
		}
		return nil, 0, err
	}
	if herr != nil { // its session is not to be had now: the resume reads the bytes again
		s.log.Warn("a taken-over execution's program is restored at its resume", x.logAttrs("error", herr.Body.Message)...)
	}
	x.parked = p
	x.releasePending = chain(x.tenant.quota.ForcePending(), orNothing(x.releasePending))
	x.mu.Lock()
	for _, p := range m.Pending {
		pc := &pendingCall{call: p.Call, expires: p.Expires, parkID: p.ParkID}
		if pc.call.Kind == "" {
			pc.call.Kind = KindTool // parkfile.go writes a tool's call without its kind
		}
		if res, ok := given[p.ParkID]; ok {
			x.answerParkedLocked(pc, res)
			continue
		}
		x.pending = append(x.pending, pc)
	}
	x.mu.Unlock()
	return x, after, nil
}

// holdAdopted holds x, adopted from node from, here: in the table (where
// a request finds it and resumes it), counted, its calls' expiry armed,
// and resumed at once when they were all answered.
func (s *Server) holdAdopted(x *execution, from string) {
	t := x.tenant
	if prev, _ := s.table.Add(x, math.MaxInt); prev != nil { // its idempotency key is an execution's here already
		x.key = ""
		_, _ = s.table.Add(x, math.MaxInt)
	}
	s.metrics.running.WithLabelValues(t.name).Inc()
	s.metrics.parked.WithLabelValues(t.name).Inc()
	t.quota.Parked(x.parkedSize)
	s.log.Info("took over a parked execution", x.logAttrs("tenant", t.name, "from", from, "node", s.cfg.node())...)
	x.mu.Lock()
	due := x.resumeDueLocked()
	x.armExpiryLocked(s)
	p := x.parked
	x.mu.Unlock()
	s.holdForGrace(x, p) // restored to check it; past the grace its bytes in the store stand for it
	if due {
		// Not on the caller's goroutine: the lease loop takes over too,
		// and a resume may wait for room in the sandbox.
		go s.resumeOrRetry(x)
	}
}

// restoreFrom restores x's program from pf, its parked bytes, and checks
// it is the one pf describes. herr is a session not to be had now: then
// there is no Parked, and no error.
func (s *Server) restoreFrom(x *execution, pf *parkFile) (p *executor.Parked, herr *httpError, err error) {
	ex, herr, err := s.executorFor(x)
	if herr != nil || err != nil {
		return nil, herr, err
	}
	if p, err = ex.RestoreParked(pf.program); err != nil {
		return nil, nil, err
	}
	if err := pf.holds(p); err != nil {
		p.Release()
		return nil, nil, err
	}
	return p, nil, nil
}

// carryEvents numbers x's events on from those its owner emitted, and
// returns the last id published: after the park (meta) and the result
// events of the answers given since (answered), each kept within
// max_events or counted dropped; with a stream (feed), after the last
// published, whose events x then holds when they are all there, so that
// this node serves an event stream from its start.
func (s *Server) carryEvents(ctx context.Context, x *execution, m parkMeta, answered int, feed cluster.EventsFeed) int {
	kept, dropped := m.Events, m.Dropped
	for range answered {
		if kept < x.maxEvents {
			kept++
		} else {
			dropped++
		}
	}
	ctx, cancel := context.WithTimeout(ctx, cluster.StoreTimeout)
	defer cancel()
	events, last, err := feed(ctx, x.id, 2*(x.maxEvents+len(m.Pending))+1)
	if err != nil {
		s.log.Warn("reading a taken-over execution's published events failed; its events go on from its snapshot's count",
			"execution", x.id, "error", err.Error())
	}
	kept = max(kept, last)
	x.dropped = dropped
	if lost := unpublishedPending(m, events, last, kept, answered, x.maxEvents); err == nil && lost != nil {
		// Its owner was lost after writing the record and before
		// publishing the park's pending events: they are published now.
		x.events = append(events, lost...)
		return last
	}
	if len(events) == kept && events[kept-1].ID == kept {
		x.events = events
	} else {
		x.eventBase = kept
	}
	return kept
}

// unpublishedPending rebuilds the pending events of the park that the
// stream lacks, when only they are missing from it: the stream holds
// events 1..last, all published, and the rest up to kept are the park's
// last pending events (no result came after the park, and every pending
// event was kept within maxEvents). nil otherwise.
func unpublishedPending(m parkMeta, events []Event, last, kept, answered, maxEvents int) []Event {
	miss := kept - last
	if miss <= 0 || miss > len(m.Pending) || answered > 0 || kept != m.Events || m.Events >= maxEvents || len(events) != last {
		return nil
	}
	var out []Event
	for i, p := range m.Pending[len(m.Pending)-miss:] {
		if p.Call.Kind == "" {
			p.Call.Kind = KindTool
		}
		b, err := json.Marshal(struct {
			PendingCall
			ExpiresAt time.Time `json:"expires_at"`
		}{p.Call, p.Expires})
		if err != nil {
			return nil
		}
		typ := EventPending
		if p.Call.Kind == KindApproval {
			typ = EventApprovalPending
		}
		out = append(out, Event{ID: last + i + 1, Type: typ, Data: b})
	}
	return out
}
