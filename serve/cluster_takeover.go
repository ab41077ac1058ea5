package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/serve/store"
)

// Taking over parked executions. A parked execution's record names its
// bytes in the store (Record.Snapshot); when its owner is gone (its lease
// expired or dropped, or it is this node's own earlier life), any node may
// claim the record, revision-checked, so that of nodes racing exactly one
// wins, and hold the execution parked here, to resume it from the bytes
// when its results come (or its calls expire).

// isParkedRecord reports whether r is a parked execution's.
func isParkedRecord(r store.Record) bool { return r.Status == StatusPending && r.Snapshot != "" }

// adoptParked takes over every parked record whose owner gone says is
// gone. A record another node claims first is left to it.
func (c *cluster) adoptParked(ctx context.Context, gone func(owner string) bool) error {
	recs, err := c.st.List(ctx)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if !isParkedRecord(r) || !gone(r.Owner) {
			continue
		}
		if _, err := c.takeOver(ctx, r); err != nil && !errors.Is(err, store.ErrConflict) {
			c.s.log.Warn("taking over a parked execution failed", "execution", r.ID, "owner", r.Owner, "error", err.Error())
		}
	}
	return nil
}

// takeOver claims r (a parked execution's record, as read) for this node
// and holds the execution here, parked. It fails with store.ErrConflict
// when another node updated the record first (it claimed it, or its owner
// wrote it).
func (c *cluster) takeOver(ctx context.Context, r store.Record) (*execution, error) {
	if x := c.s.table.lookup(r.ID); x != nil {
		return x, nil
	}
	t := c.s.tenantNamed(r.Tenant)
	if t == nil {
		return nil, fmt.Errorf("execution %s belongs to tenant %q, which this node does not serve", r.ID, r.Tenant)
	}
	data, err := c.st.GetSnapshot(ctx, r.Snapshot)
	if err != nil {
		return nil, fmt.Errorf("execution %s: its snapshot %s: %w", r.ID, r.Snapshot, err)
	}
	pf, err := decodeParkFile(data)
	if err != nil {
		return nil, fmt.Errorf("execution %s: its snapshot %s: %w", r.ID, r.Snapshot, err)
	}
	var given map[int32]ToolResult
	if len(r.Answers) > 0 {
		if err := json.Unmarshal(r.Answers, &given); err != nil {
			return nil, fmt.Errorf("execution %s: its record's answers are not valid: %w", r.ID, err)
		}
	}
	from := r.Owner
	r.Owner = c.node
	rev, err := c.st.Update(ctx, r)
	if err != nil {
		return nil, err
	}

	m := pf.meta
	x := newExecution(r.ID, t, nil, m.Key, true, c.s.cfg.maxEvents())
	copy(x.sum[:], m.Sum)
	x.created, x.spec, x.calls, x.callCount, x.eventBase = m.Created, m.Spec, m.Calls, m.CallCount, m.Events
	x.snapshot, x.status = r.Snapshot, StatusPending
	x.answers, x.given = map[int32]executor.Answer{}, map[int32]ToolResult{}
	x.releasePending = c.s.forcePending(t.name)
	x.cancel = func() {}
	x.mu.Lock()
	for _, p := range m.Pending {
		pc := &pendingCall{call: p.Call, expires: p.Expires, parkID: p.ParkID}
		if res, ok := given[p.ParkID]; ok {
			x.answerParkedLocked(pc, res)
			continue
		}
		x.pending = append(x.pending, pc)
	}
	x.mu.Unlock()
	if prev, _ := c.s.table.add(x, math.MaxInt); prev != nil { // its idempotency key is an execution's here already
		x.key = ""
		_, _ = c.s.table.add(x, math.MaxInt)
	}
	c.s.metrics.running.WithLabelValues(t.name).Inc()
	c.s.metrics.parked.WithLabelValues(t.name).Inc()
	c.mu.Lock()
	c.owned[x.id] = &owned{mu: make(chanMutex, 1), rev: rev, last: r.State, snap: r.Snapshot, ans: r.Answers, after: m.Events}
	c.mu.Unlock()
	c.s.log.Info("took over a parked execution", "execution", x.id, "tenant", t.name, "from", from, "node", c.node)
	x.mu.Lock()
	due := x.resumeDueLocked()
	x.armExpiryLocked(c.s)
	x.mu.Unlock()
	if due {
		if herr := c.s.resume(x); herr != nil {
			c.s.log.Warn("resuming a taken-over execution was refused; it resumes at the next result", "execution", x.id, "error", herr.body.Message)
		}
	}
	return x, nil
}

// ownerGone reports, from the leases, whether node has no live lease.
func ownerGone(leases []store.Lease, node string, now time.Time) bool {
	for _, l := range leases {
		if l.Node == node {
			return l.Expired(now)
		}
	}
	return true
}
