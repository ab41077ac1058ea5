package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ptcx/ptcx/serve/protocol"
	"github.com/ptcx/ptcx/serve/store"
)

// owned is the record of an execution this node owns: the revision it
// last wrote and what it wrote, so that an unchanged state is not
// rewritten; lost once another node overwrote it.
type owned struct {
	mu   chanMutex
	rev  uint64
	last []byte
	snap string // the snapshot the last write named
	ans  []byte // the answers it carried
	lost bool
	// keyUntil is when the reservation of the execution's idempotency key
	// expires, as far as this node knows (idempotency.go).
	keyUntil time.Time

	// following and after belong to c.mu: whether a follower runs, and
	// the last event it published.
	following bool
	after     int

	// taking is closed once this node's takeover of the execution ended
	// (takeover.go), taken its error then: a second takeover of it
	// here waits for the first instead of claiming it again.
	taking chan struct{}
	taken  error
}

// chanMutex is a mutex a writer can give up waiting for (on c.stop).
type chanMutex chan struct{}

func (m chanMutex) lock()   { m <- struct{}{} }
func (m chanMutex) unlock() { <-m }

// StoreTimeout bounds one write of a record.
const StoreTimeout = 5 * time.Second

// Adopt writes x's first record, or claims the record a queued execution
// left (Owner ""), and starts following x: its events are published and
// its record rewritten at every change until it settles. It is a no-op
// for an execution adopted already (a repeated idempotency key).
func (c *Cluster) Adopt(ctx context.Context, x Execution) error {
	c.mu.Lock()
	if _, ok := c.owned[x.ID()]; ok {
		c.mu.Unlock()
		return nil
	}
	if !c.Current(x) { // the lease lapsed since x was admitted: no record is written for it
		c.mu.Unlock()
		c.forgetKey(ctx, x)
		return fmt.Errorf("%w: %s", ErrFenced, c.Fence.Refusal())
	}
	o := &owned{mu: make(chanMutex, 1)}
	c.owned[x.ID()] = o
	c.mu.Unlock()
	o.mu.lock()
	defer o.mu.unlock()
	rec := c.recordOf(x)
	rev, err := c.Store.Create(ctx, rec)
	if errors.Is(err, store.ErrExists) {
		rev, err = c.claim(ctx, rec)
	}
	if err != nil {
		c.forget(x.ID(), o)
		if !errors.Is(err, store.ErrConflict) { // a queued execution's record another node claimed keeps its key
			c.forgetKey(ctx, x)
		}
		return err
	}
	o.rev, o.last = rev, rec.State
	if x.Key() != "" { // reserved at its start with this expiry (idempotency.go)
		o.keyUntil = x.Created().Add(2 * c.LiveTTL)
	}
	c.Wake(x)
	return nil
}

// Wake starts x's follower unless one runs: at adoption, and when a
// parked execution resumes (a parked one has none).
func (c *Cluster) Wake(x Execution) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.owned[x.ID()]
	if o == nil || o.following {
		return
	}
	o.following = true
	c.followers.Add(1)
	go c.follow(x, o)
}

// claim takes over the record of a queued execution (revision-checked),
// or accepts it when this node claimed it already.
func (c *Cluster) claim(ctx context.Context, rec store.Record) (uint64, error) {
	cur, err := c.Store.Get(ctx, rec.ID)
	if err != nil {
		return 0, err
	}
	if cur.Tenant != rec.Tenant || (cur.Owner != "" && cur.Owner != c.Node) {
		return 0, fmt.Errorf("%w: execution %s is owned by node %s", store.ErrConflict, rec.ID, cur.Owner)
	}
	rec.Revision = cur.Revision
	return c.Store.Update(ctx, rec)
}

// GiveUp stops this node writing the record of an execution it released
// (stopping): the record, parked, is left for the node that takes it over.
func (c *Cluster) GiveUp(id string) {
	c.mu.Lock()
	o := c.owned[id]
	c.mu.Unlock()
	if o == nil {
		return
	}
	select {
	case o.mu <- struct{}{}:
	case <-c.stop:
		return
	}
	o.lost = true
	o.mu.unlock()
}

// forget drops o, id's owned record, unless another replaced it.
func (c *Cluster) forget(id string, o *owned) {
	c.mu.Lock()
	if c.owned[id] == o {
		delete(c.owned, id)
	}
	c.mu.Unlock()
}

// recordOf is x's record as this node owns it now.
func (c *Cluster) recordOf(x Execution) store.Record {
	st := x.State()
	b, err := json.Marshal(st)
	if err != nil {
		b = []byte(`{}`)
	}
	r := store.Record{ID: x.ID(), Tenant: x.Tenant(), Owner: c.Node, Status: st.Status, State: b,
		ExpiresAt: time.Now().Add(c.LiveTTL)}
	if x.Key() != "" {
		r.Reservation = ReservationKeyOf(x.Tenant(), x.Key())
	}
	for _, p := range st.Pending {
		r.Pending = append(r.Pending, p.ID)
	}
	r.Snapshot, r.Answers = x.ParkedState()
	if st.Status == protocol.StatusCompleted || st.Status == protocol.StatusFailed {
		r.ExpiresAt = time.Now().Add(c.Retention)
	}
	return r
}

// follow publishes x's events and rewrites its record at each change,
// ending after the settled state is written, or once x is parked with its
// record written (wake starts it again when x resumes).
func (c *Cluster) follow(x Execution, o *owned) {
	defer c.followers.Done()
	c.mu.Lock()
	after := o.after
	c.mu.Unlock()
	for {
		events, done, changed := x.EventsAfter(after)
		if !c.Current(x) {
			// A copy from an ended epoch: what it does now is its own, never
			// published (the store's record and stream stand for it).
			events = nil
		}
		for _, e := range events {
			c.publish(x.ID(), e)
			after = e.ID
		}
		if err := c.persist(x, o); err != nil {
			c.log.Warn("writing an execution's record failed", "execution", x.ID(), "error", err.Error())
		}
		if done && len(events) == 0 {
			c.forget(x.ID(), o)
			return
		}
		if done {
			continue
		}
		if x.IsParked() && c.parkedWritten(x, o, after) {
			return
		}
		select {
		case <-changed:
		case <-c.stop:
			return
		}
	}
}

// parkedWritten reports whether x's parked record is written; then the
// follower stops (under c.mu, so that wake sees it stopped).
func (c *Cluster) parkedWritten(x Execution, o *owned, after int) bool {
	select {
	case o.mu <- struct{}{}:
	case <-c.stop:
		return false
	}
	written := o.snap != "" && o.snap == x.SnapshotName()
	o.mu.unlock()
	if !written {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if newer, _, _ := x.EventsAfter(after); len(newer) > 0 || !x.IsParked() { // go on following
		return false
	}
	o.following, o.after = false, after
	return true
}

// persist writes x's record if its state changed since the last write.
// Another node having overwritten it (it reaped this node, which it
// believed lost) makes this node give the execution up: it is cancelled.
func (c *Cluster) persist(x Execution, o *owned) error {
	select {
	case o.mu <- struct{}{}:
	case <-c.stop:
		return nil
	}
	defer o.mu.unlock()
	// A stopped node writes nothing more (a select with both ready picks
	// either: stop is checked again), and neither does one that gave x up
	// (releaseParked): its state here no longer names the parked bytes, and
	// written, it would make the record look like a run lost mid-flight.
	select {
	case <-c.stop:
		return nil
	default:
	}
	if o.lost || x.IsReleased() || !c.Current(x) {
		// A copy from an ended epoch writes nothing: its record is left as
		// last written, for reconcile (or another node) to settle.
		return nil
	}
	rec := c.recordOf(x)
	if bytes.Equal(rec.State, o.last) && rec.Snapshot == o.snap && bytes.Equal(rec.Answers, o.ans) {
		return nil
	}
	rec.Revision = o.rev
	ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
	defer cancel()
	rev, err := c.Store.Update(ctx, rec)
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		o.lost = true
		x.SetEpoch(0) // not this node's: the store answers for it
		c.log.Warn("execution taken over by another node: cancelled here", "execution", x.ID(), "node", c.Node)
		go c.n.Cancel(x) // not under o.mu: cancelling writes nothing more (o.lost)
		return nil
	}
	if err != nil {
		return err
	}
	if o.snap != "" && o.snap != rec.Snapshot {
		// The record no longer names the old snapshot: it is garbage.
		if err := c.Store.DeleteSnapshot(ctx, o.snap); err != nil {
			c.log.Warn("deleting a superseded snapshot failed", "snapshot", o.snap, "error", err.Error())
		}
	}
	o.rev, o.last, o.snap, o.ans = rev, rec.State, rec.Snapshot, rec.Answers
	c.keepKey(ctx, o, rec)
	return nil
}

// PersistNow writes x's record before a handler answers (so that a
// pending execution is in the store before its client hears of it).
func (c *Cluster) PersistNow(x Execution) error {
	c.mu.Lock()
	o := c.owned[x.ID()]
	c.mu.Unlock()
	if o == nil {
		return nil
	}
	return c.persist(x, o)
}

// DroppedPublishes, when set (tests: DropPublishes), names a node whose
// events are not published, as if it were lost before publishing them.
var DroppedPublishes atomic.Pointer[string]

func publishDropped(node string) bool {
	n := DroppedPublishes.Load()
	return n != nil && *n == node
}

// publish puts one event on the execution's subject (NATS only); the
// message id makes a repeated publish harmless.
func (c *Cluster) publish(id string, e protocol.Event) {
	if c.js == nil || publishDropped(c.Node) {
		return
	}
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
	defer cancel()
	if _, err := c.js.Publish(ctx, c.eventSubject(id), b, jetstream.WithMsgID(id+"-"+strconv.Itoa(e.ID))); err != nil {
		c.log.Warn("publishing an event failed", "execution", id, "event", e.ID, "error", err.Error())
	}
}

// endEvents publishes the done event of an execution another node
// settled (a lost one), numbered after the last one published.
func (c *Cluster) endEvents(ctx context.Context, id string, st protocol.ExecutionState) {
	if c.js == nil {
		return
	}
	next := 1
	if s, err := c.js.Stream(ctx, c.Events); err == nil {
		if m, err := s.GetLastMsgForSubject(ctx, c.eventSubject(id)); err == nil {
			var last protocol.Event
			if json.Unmarshal(m.Data, &last) == nil {
				next = last.ID + 1
			}
		}
	}
	data, _ := json.Marshal(map[string]any{"status": st.Status, "code": st.Error.Code})
	c.publish(id, protocol.Event{ID: next, Type: protocol.EventDone, Data: data})
}
