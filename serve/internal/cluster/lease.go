package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/serve/protocol"
	"github.com/ptcx/ptcx/serve/store"
)

// The lease: each node renews its own (leaseLoop), and fails or takes
// over what the nodes whose lease expired owned (reapLoop). Its own lease
// is also its fence's proof (serve/internal/fence, fence.go).

// leaseLoop renews the lease three times per lease, and does nothing
// else: a renewal is never late for want of the loop's time. Each until
// is computed from the instant its renewal starts, which the fence
// measures from.
func (c *Cluster) leaseLoop() {
	defer c.wg.Done()
	t := time.NewTicker(c.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		if renewalsStalled(c.Node) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.Lease/3)
		start := time.Now()
		err := c.Store.RenewLease(ctx, c.Node, start.Add(c.Lease))
		cancel()
		if err == nil {
			c.Fence.Renewed(start)
		}
		c.mu.Lock()
		c.healthy = err
		c.mu.Unlock()
		if err != nil {
			c.log.Warn("lease renewal failed", "node", c.Node, "error", err.Error())
		}
	}
}

// reapLoop, three times per lease, reconciles what a lapse of this
// node's lease left (fence.go) and reaps the nodes whose lease
// expired; a node that cannot prove its own lease judges no other's.
func (c *Cluster) reapLoop() {
	defer c.wg.Done()
	t := time.NewTicker(c.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		if !c.Fence.Live() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.Lease)
		c.reconcile(ctx)
		c.reapExpired(ctx)
		cancel()
	}
}

// reapExpired reaps every other node whose lease has expired, by more
// than the margin (gone).
func (c *Cluster) reapExpired(ctx context.Context) {
	leases, err := c.Store.Leases(ctx)
	if err != nil {
		c.log.Warn("listing leases failed", "error", err.Error())
		return
	}
	now := time.Now()
	for _, l := range leases {
		if l.Node == c.Node || !c.gone(l, now) {
			continue
		}
		if err := c.TakeOverLost(ctx, l, "stopped renewing its lease", c.Store.List); err != nil {
			c.log.Warn("reaping a lost node failed", "node", l.Node, "error", err.Error())
			continue
		}
		if err := c.Store.DropLease(ctx, l); err != nil && !errors.Is(err, store.ErrConflict) {
			c.log.Warn("dropping a lost node's lease failed", "node", l.Node, "error", err.Error())
		}
	}
}

// reap fails every unsettled execution l.Node owns that is not parked
// (a parked one is taken over: adoptParked), each by a revision-checked
// update (a record another node reaped or its owner settled first is left
// as it is).
func (c *Cluster) reap(ctx context.Context, l store.Lease, why string) error {
	recs, err := c.Store.List(ctx)
	if err != nil {
		return err
	}
	return c.reapIn(ctx, recs, l, why)
}

// reapIn is reap over records listed already.
func (c *Cluster) reapIn(ctx context.Context, recs []store.Record, l store.Lease, why string) error {
	for _, r := range recs {
		if r.Owner != l.Node || r.Status == protocol.StatusCompleted || r.Status == protocol.StatusFailed || isParkedRecord(r) {
			continue
		}
		if x := c.n.Lookup(r.ID); l.Node == c.Node && x != nil && c.Current(x) {
			continue // running here now
		}
		if err := c.fail(ctx, r, api.CodeNodeLost, fmt.Sprintf(
			"node %s, which was running this execution, %s before it settled; it was running (not parked on its client), so its program state was not saved: run it again", l.Node, why)); err != nil && !errors.Is(err, store.ErrConflict) {
			return err
		}
		c.log.Warn("execution failed: its node was lost", "execution", r.ID, "tenant", r.Tenant, "node", l.Node, "status", r.Status)
	}
	return nil
}

// LeaseAlive reports whether node holds a lease that has not expired, by
// more than the margin (gone).
func (c *Cluster) LeaseAlive(ctx context.Context, node string) (bool, error) {
	leases, err := c.Store.Leases(ctx)
	if err != nil {
		return false, err
	}
	for _, l := range leases {
		if l.Node == node {
			return !c.gone(l, time.Now()), nil
		}
	}
	return false, nil
}

// fail settles a record as failed with code, revision-checked, and ends
// its event stream.
func (c *Cluster) fail(ctx context.Context, r store.Record, code api.Code, msg string) error {
	st := protocol.ExecutionState{ID: r.ID, Status: protocol.StatusFailed, Error: &protocol.ErrorBody{Code: string(code), Message: msg}}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	r.Status, r.State, r.Pending = protocol.StatusFailed, b, nil
	r.ExpiresAt = time.Now().Add(c.Retention)
	if _, err := c.Store.Update(ctx, r); err != nil {
		return err
	}
	c.endEvents(ctx, r.ID, st)
	c.keyUntil(ctx, r, r.ExpiresAt)
	return nil
}
