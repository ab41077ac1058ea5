package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ptcx/ptcx/serve/internal/httperr"
	"github.com/ptcx/ptcx/serve/store"
)

// What a node does about its fence (serve/internal/fence; the node's
// checks: fencing.go). While the lease is proven,
// nothing: an execution is current (its epoch holds) and the node acts for
// it as always. When the lease lapses (the watchdog, or a renewal that
// came too late, notices it) the epoch ends and lapse stops every
// execution that ran under it: its run is cancelled, and it settles here
// without a word of it written or published; its record is left as last
// written. From then on the node answers requests for it from the store's
// record, or forwards them to its owner, never from its own copy (local).
// Once a renewal proves the lease again (a new epoch), reconcile settles
// what the lapse left: the running executions' records still naming this
// node fail NODE_LOST (as another node would have failed them), and each
// parked one is either reclaimed, when its record is still the one this
// node wrote last (nobody took it over), or dropped here, when another
// node took it over or settled it meanwhile.

// Stalled, when it holds a node's name (tests: StallRenewals), keeps
// that node's lease loop from renewing, as if it were stopped or cut off
// from the store.
var Stalled sync.Map

func renewalsStalled(node string) bool {
	_, ok := Stalled.Load(node)
	return ok
}

// ErrFenced is the error of an act a node refuses for want of a proven
// lease.
var ErrFenced = errors.New("serve: this node cannot prove its cluster lease is current")

// lapse is the fence's lapsed: the runs of epoch's executions are
// cancelled (their nested calls are refused by the guard already). A
// parked one, which runs nothing, is left for reconcile; its program is
// released from memory (its bytes in the store stand for it: a reclaimed
// one is restored from them, as one taken over is).
func (c *Cluster) lapse(epoch uint64) {
	c.lapses.Add(1)
	stopped := 0
	for _, x := range c.n.Live() {
		if e := x.Epoch(); e == 0 || e > epoch {
			continue
		}
		if x.IsParked() {
			x.ReleaseProgram()
			continue
		}
		stopped++
		x.CancelRun()
	}
	c.log.Warn("lease lapsed: this node stops the executions it ran under it, and answers for them from the store",
		"node", c.Node, "epoch", epoch, "stopped", stopped, "limit_ms", c.Fence.Limit().Milliseconds())
}

// Current reports whether this node acts for x now: x runs under the
// epoch the fence holds.
func (c *Cluster) Current(x Execution) bool {
	e := x.Epoch()
	return e != 0 && c.Fence.Holds(e)
}

// reconcile settles what lapses left, once the lease is proven again.
// It is done when every lapse so far is reconciled; a store failure
// leaves it for the next round of the reap loop.
func (c *Cluster) reconcile(ctx context.Context) {
	seen := c.lapses.Load()
	if seen == c.reconciled.Load() || !c.Fence.Live() {
		return
	}
	if err := c.reap(ctx, store.Lease{Node: c.Node}, "lost its lease (it could not renew it within lease − margin: paused, or cut off from the store)"); err != nil {
		c.log.Warn("settling this node's executions after its lease lapsed failed; retried", "node", c.Node, "error", err.Error())
		return
	}
	clean := true
	for _, x := range c.n.Live() {
		if c.Current(x) || !x.IsParked() || x.IsReleased() {
			continue
		}
		if err := c.refresh(ctx, x); err != nil {
			c.log.Warn("reclaiming a parked execution after the lease lapsed failed; retried", "execution", x.ID(), "error", err.Error())
			clean = false
		}
	}
	if clean {
		c.reconciled.Store(seen)
	}
}

// refresh reclaims a parked x this node holds from an ended epoch, or
// drops it here when its record is no longer the one this node wrote.
func (c *Cluster) refresh(ctx context.Context, x Execution) error {
	r, err := c.Store.Get(ctx, x.ID())
	if err == nil {
		err = c.reclaim(ctx, x, r)
	}
	if err == nil || !(errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound)) {
		return err
	}
	c.discard(x)
	return nil
}

// reclaim makes a parked x of an ended epoch current again: its record r
// (as read now) must be the one this node wrote last, which is rewritten
// as it is (revision-checked: a node taking it over at once loses) to
// prove it. store.ErrConflict when it is not.
func (c *Cluster) reclaim(ctx context.Context, x Execution, r store.Record) error {
	epoch, ok := c.Fence.Epoch()
	if !ok {
		return ErrFenced
	}
	c.mu.Lock()
	o := c.owned[x.ID()]
	c.mu.Unlock()
	if o == nil || r.Owner != c.Node || !isParkedRecord(r) {
		return fmt.Errorf("%w: execution %s is no longer this node's", store.ErrConflict, x.ID())
	}
	select {
	case o.mu <- struct{}{}:
	case <-c.stop:
		return ErrFenced
	}
	defer o.mu.unlock()
	if o.lost || r.Revision != o.rev || !x.IsParked() {
		return fmt.Errorf("%w: execution %s changed since this node wrote it", store.ErrConflict, x.ID())
	}
	rev, err := c.Store.Update(ctx, r)
	if errors.Is(err, store.ErrNotFound) {
		err = store.ErrConflict
	}
	if err != nil {
		return err
	}
	o.rev = rev
	x.SetEpoch(epoch)
	c.log.Info("reclaimed a parked execution after the lease lapsed: nobody took it over", "execution", x.ID(), "node", c.Node)
	c.n.Reclaimed(x)
	return nil
}

// discard drops this node's copy of a parked x another node took over
// (or settled) while this node's lease had lapsed: its program is
// released, and it settles here, never written nor published (this node
// no longer owns its record).
func (c *Cluster) discard(x Execution) {
	if !c.n.Unpark(x) {
		return
	}
	c.mu.Lock()
	o := c.owned[x.ID()]
	delete(c.owned, x.ID()) // no follower runs for a parked x, and none starts for it now
	c.mu.Unlock()
	if o != nil {
		o.mu.lock()
		o.lost = true
		o.mu.unlock()
	}
	c.n.DropCopy(x)
}

// stale answers a request another node forwarded for an execution this
// node holds from an ended epoch: a parked one whose record is still its
// own is reclaimed (and the request applied), any other is a 503 to
// retry (its record answers once reconciled, or reaped).
func (c *Cluster) stale(ctx context.Context, x Execution) (Execution, *httperr.Error) {
	if x.IsParked() && c.Fence.Live() {
		if err := c.refresh(ctx, x); err == nil && c.Current(x) {
			return x, nil
		}
	}
	return nil, httperr.Unavailable(httperr.CodeOwnerUnavailable, "node %s cannot act on execution %s now: %s; retry", c.Node, x.ID(), c.Fence.Refusal())
}

// gone reports whether l's node is lost at now: past its lease's until
// plus the margin (until then the node may still be acting, serve/internal/fence).
func (c *Cluster) gone(l store.Lease, now time.Time) bool {
	return l.Lost(now, c.Fence.Margin())
}
