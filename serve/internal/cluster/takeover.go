package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/serve/protocol"
	"github.com/ptcx/ptcx/serve/store"
)

// Taking over parked executions. A parked execution's record names its
// bytes in the store (Record.Snapshot); when its owner is gone (its lease
// expired or dropped, or it is this node's own earlier life), any node may
// claim the record, revision-checked, so that of nodes racing exactly one
// wins; the winner then reads the bytes, once, checks that they are the
// execution's own (parkfile.go belongsTo, holds), and holds the execution
// here, parked, its program restored, to resume it when its results come
// (or its calls expire): the node's side, park_adopt.go. Bytes that cannot be read now give the claim
// back (a retry takes it again); bytes that are not the execution's own
// fail it (INTERNAL): another execution's program is never resumed as it.

// isParkedRecord reports whether r is a parked execution's.
func isParkedRecord(r store.Record) bool {
	return r.Status == protocol.StatusPending && r.Snapshot != ""
}

// errTakeOverRefused is takeOver's error for an execution it failed
// instead of taking it over: its bytes are not its own.
var errTakeOverRefused = errors.New("serve: the parked execution's snapshot is not its own: the execution was failed")

// adoptParked takes over every parked record whose owner gone says is
// gone. A record another node claims first is left to it.
func (c *Cluster) adoptParked(ctx context.Context, gone func(owner string) bool) error {
	recs, err := c.Store.List(ctx)
	if err != nil {
		return err
	}
	c.adoptIn(ctx, recs, gone)
	return nil
}

// adoptIn is adoptParked over records listed already.
func (c *Cluster) adoptIn(ctx context.Context, recs []store.Record, gone func(owner string) bool) {
	for _, r := range recs {
		if !isParkedRecord(r) || !gone(r.Owner) {
			continue
		}
		if _, err := c.TakeOver(ctx, r); err != nil && !errors.Is(err, store.ErrConflict) && !errors.Is(err, errTakeOverRefused) {
			c.log.Warn("taking over a parked execution failed", "execution", r.ID, "owner", r.Owner, "error", err.Error())
		}
	}
}

// TakeOverLost settles what node l.Node, gone, left, from one listing of
// the records (list, the store's List): its running executions fail
// (NODE_LOST, reap) and its parked ones are taken over here.
func (c *Cluster) TakeOverLost(ctx context.Context, l store.Lease, why string, list func(context.Context) ([]store.Record, error)) error {
	recs, err := list(ctx)
	if err != nil {
		return err
	}
	if err := c.reapIn(ctx, recs, l, why); err != nil {
		return err
	}
	c.adoptIn(ctx, recs, func(owner string) bool { return owner == l.Node })
	return nil
}

// TakeOver claims r (a parked execution's record, as read) for this node
// and holds the execution here, parked. It fails with store.ErrConflict
// when another node updated the record first (it claimed it, or its owner
// wrote it), with errTakeOverRefused when the bytes the record names are
// not the execution's own (the record is failed then), and otherwise,
// the record given back, when they could not be read.
func (c *Cluster) TakeOver(ctx context.Context, r store.Record) (Execution, error) {
	epoch, ok := c.Fence.Epoch()
	if !ok {
		return nil, ErrFenced
	}
	if x := c.n.Lookup(r.ID); x != nil {
		if c.Current(x) {
			return x, nil
		}
		if x.IsParked() { // held from an ended epoch (fence.go)
			if err := c.refresh(ctx, x); err != nil || c.Current(x) {
				return x, err
			}
		}
		// Else a copy this node dropped, or lost: the record is taken over
		// as any other node's.
	}
	c.mu.Lock()
	if o := c.owned[r.ID]; o != nil { // being taken over here (the lease loop and a request), or owned
		c.mu.Unlock()
		if o.taking != nil {
			select {
			case <-o.taking:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if o.taken != nil {
				return nil, o.taken
			}
		}
		if x := c.n.Lookup(r.ID); x != nil && c.Current(x) {
			return x, nil
		}
		return nil, fmt.Errorf("%w: execution %s is this node's already", store.ErrConflict, r.ID)
	}
	o := &owned{mu: make(chanMutex, 1), taking: make(chan struct{})}
	c.owned[r.ID] = o
	c.mu.Unlock()
	x, err := c.claimParked(ctx, r, o, epoch)
	if err != nil {
		c.forget(r.ID, o)
	}
	o.taken = err
	close(o.taking)
	return x, err
}

// awaitTakeOver waits, at most storeTimeout, for this node's takeover of
// execution id to end, and reports whether one was under way.
func (c *Cluster) awaitTakeOver(id string) bool {
	c.mu.Lock()
	o := c.owned[id]
	c.mu.Unlock()
	if o == nil || o.taking == nil {
		return false
	}
	t := time.NewTimer(StoreTimeout)
	defer t.Stop()
	select {
	case <-o.taking:
	case <-t.C:
	}
	return true
}

// claimParked is takeOver once this node's takeover of r is the only one,
// o its owned record to fill, epoch the one it runs under here.
func (c *Cluster) claimParked(ctx context.Context, r store.Record, o *owned, epoch uint64) (Execution, error) {
	if !c.n.Serves(r.Tenant) {
		return nil, fmt.Errorf("execution %s belongs to tenant %q, which this node does not serve", r.ID, r.Tenant)
	}
	var given map[int32]protocol.ToolResult
	if len(r.Answers) > 0 {
		if err := json.Unmarshal(r.Answers, &given); err != nil {
			return nil, fmt.Errorf("execution %s: its record's answers are not valid: %w", r.ID, err)
		}
	}
	from := r.Owner
	r.Owner = c.Node
	rev, err := c.Store.Update(ctx, r)
	if err != nil {
		return nil, err
	}
	r.Revision = rev

	// Claimed: the bytes are read once, now.
	data, err := c.n.ReadSnapshot(ctx, r.Snapshot)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		c.unclaim(ctx, r, from)
		return nil, fmt.Errorf("execution %s: %w", r.ID, err)
	}
	var x Execution
	var after int
	if err == nil {
		x, after, err = c.n.AdoptParked(ctx, r.ID, r.Tenant, r.Snapshot, data, given, epoch, c.PublishedEvents)
	}
	if err != nil {
		return nil, c.refuse(ctx, r, from, err)
	}
	c.mu.Lock() // before x is in the table: a request that finds it resumes it, and its follower writes its record
	o.rev, o.last, o.snap, o.ans, o.after = rev, r.State, r.Snapshot, r.Answers, after
	c.mu.Unlock()
	c.n.HoldAdopted(x, from)
	return x, nil
}

// unclaim returns a claimed record to the owner it had, for a retry to
// take it over again: its bytes could not be read now.
func (c *Cluster) unclaim(ctx context.Context, r store.Record, from string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StoreTimeout)
	defer cancel()
	r.Owner = from
	if _, err := c.Store.Update(ctx, r); err != nil {
		c.log.Warn("giving a parked execution back after its snapshot could not be read failed", "execution", r.ID, "node", c.Node, "error", err.Error())
	}
}

// refuse fails a claimed record whose bytes are not its execution's own
// (or cannot continue here), with a log line, and returns
// errTakeOverRefused; the bytes are left as they are (they may be
// another execution's).
func (c *Cluster) refuse(ctx context.Context, r store.Record, from string, cause error) error {
	c.log.Error("refused to take over a parked execution: its snapshot is not its own, or cannot continue here; the execution is failed",
		"execution", r.ID, "tenant", r.Tenant, "from", from, "snapshot", r.Snapshot, "error", cause.Error())
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StoreTimeout)
	defer cancel()
	msg := fmt.Sprintf("the parked execution could not be taken over from node %s: %v", from, cause)
	if err := c.fail(ctx, r, api.CodeInternal, msg); err != nil {
		return fmt.Errorf("execution %s: failing it: %w (it was refused: %v)", r.ID, err, cause)
	}
	return fmt.Errorf("%w: execution %s: %v", errTakeOverRefused, r.ID, cause)
}

// EventsFeed returns the events of execution id its cluster's stream
// holds, in order and once each, at most limit read, and the last id
// published (cluster.publishedEvents).
type EventsFeed func(ctx context.Context, id string, limit int) ([]protocol.Event, int, error)

// PublishedEvents returns the events of execution id its stream holds, in
// order and once each (a repeated publish is skipped), at most limit of
// them read, and the last id published (0: none; nothing without NATS).
func (c *Cluster) PublishedEvents(ctx context.Context, id string, limit int) ([]protocol.Event, int, error) {
	if c.js == nil {
		return nil, 0, nil
	}
	s, err := c.js.Stream(ctx, c.Events)
	if err != nil {
		return nil, 0, err
	}
	lastMsg, err := s.GetLastMsgForSubject(ctx, c.eventSubject(id))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var last protocol.Event
	if err := json.Unmarshal(lastMsg.Data, &last); err != nil {
		return nil, 0, fmt.Errorf("its last event is not valid: %w", err)
	}
	cons, err := c.js.OrderedConsumer(ctx, c.Events, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{c.eventSubject(id)}, DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return nil, last.ID, err
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, last.ID, err
	}
	defer it.Stop()
	var out []protocol.Event
	for range limit {
		msg, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return nil, last.ID, err
		}
		var e protocol.Event
		if json.Unmarshal(msg.Data(), &e) == nil && (len(out) == 0 || e.ID > out[len(out)-1].ID) {
			out = append(out, e)
		}
		if md, err := msg.Metadata(); err != nil || md.Sequence.Stream >= lastMsg.Sequence {
			break
		}
	}
	for i, e := range out {
		if e.ID != i+1 { // not all there: none is served from here
			return nil, last.ID, nil
		}
	}
	return out, last.ID, nil
}

// ownerGone reports, from the leases, whether node has no lease, or one
// expired by more than the margin (gone).
func (c *Cluster) ownerGone(leases []store.Lease, node string, now time.Time) bool {
	for _, l := range leases {
		if l.Node == node {
			return c.gone(l, now)
		}
	}
	return true
}
