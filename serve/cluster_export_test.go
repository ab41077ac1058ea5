package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptcx/ptcx/serve/internal/cluster"
	"github.com/ptcx/ptcx/serve/store"
)

// Crash ends s's part in its cluster at once, as if its process were
// killed: no more lease renewals, record writes or answers to other nodes.
func Crash(s *Server) {
	if s.cluster != nil {
		s.cluster.Crash()
	}
}

// NodeName is the name s has in its cluster ("" without one).
func NodeName(s *Server) string {
	if s.cluster == nil {
		return ""
	}
	return s.cluster.Node
}

// TakeOver has s claim the parked execution id, as a node does whose
// peer is gone; it returns nil when s holds it afterwards.
func TakeOver(s *Server, id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), cluster.StoreTimeout)
	defer cancel()
	r, err := s.cluster.Store.Get(ctx, id)
	if err != nil {
		return err
	}
	_, err = s.cluster.TakeOver(ctx, r)
	return err
}

// Holds reports whether s holds execution id in its table.
func Holds(s *Server, id string) bool { return s.table.Lookup(id) != nil }

// HoldEvictions keeps s's record deletions of evicted executions waiting
// until the returned function is called (once; more calls do nothing).
func HoldEvictions(s *Server) (release func()) {
	s.cluster.HoldEvictions.Lock()
	return sync.OnceFunc(s.cluster.HoldEvictions.Unlock)
}

// InStore reports whether the store holds execution id's record.
func InStore(s *Server, id string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cluster.StoreTimeout)
	defer cancel()
	_, err := s.cluster.Store.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// FailSnapshotReads makes the next n reads of parked bytes in this
// process (from a store, or a spill) fail as an unreachable store would;
// undo stops it.
func FailSnapshotReads(n int) (undo func()) {
	var left atomic.Int64
	left.Store(int64(n))
	f := func() error {
		if left.Add(-1) >= 0 {
			return fmt.Errorf("%w: a read failure injected by the test", store.ErrUnavailable)
		}
		return nil
	}
	readFault.Store(&f)
	return func() { readFault.Store(nil) }
}

// CountSnapshotReads counts the reads of parked bytes in this process from
// now; undo stops counting.
func CountSnapshotReads() (reads func() int, undo func()) {
	var n atomic.Int64
	f := func() error { n.Add(1); return nil }
	readFault.Store(&f)
	return func() int { return int(n.Load()) }, func() { readFault.Store(nil) }
}

// EditRecord rewrites execution id's record in s's store, as edit changes
// it (revision-checked).
func EditRecord(s *Server, id string, edit func(r *store.Record)) error {
	ctx, cancel := context.WithTimeout(context.Background(), cluster.StoreTimeout)
	defer cancel()
	r, err := s.cluster.Store.Get(ctx, id)
	if err != nil {
		return err
	}
	edit(&r)
	_, err = s.cluster.Store.Update(ctx, r)
	return err
}

// Record is execution id's record in s's store.
func Record(s *Server, id string) (store.Record, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cluster.StoreTimeout)
	defer cancel()
	return s.cluster.Store.Get(ctx, id)
}

// SnapshotBytes reads the parked bytes of that name from s's store.
func SnapshotBytes(s *Server, name string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cluster.StoreTimeout)
	defer cancel()
	return s.cluster.Store.GetSnapshot(ctx, name)
}

// PutSnapshotBytes writes parked bytes under that name to s's store.
func PutSnapshotBytes(s *Server, name string, data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), cluster.StoreTimeout)
	defer cancel()
	return s.cluster.Store.PutSnapshot(ctx, name, data)
}

// PublishedEvents are execution id's events in s's cluster's stream, and
// the last id published.
func PublishedEvents(s *Server, id string) ([]Event, int, error) {
	return PublishedEventsUpTo(s, id, 1<<10)
}

// PublishedEventsUpTo is PublishedEvents reading at most limit messages.
func PublishedEventsUpTo(s *Server, id string, limit int) ([]Event, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cluster.StoreTimeout)
	defer cancel()
	return s.cluster.PublishedEvents(ctx, id, limit)
}

// ReapLost has s settle what node, gone, left (as its lease loop does once
// the node's lease expired), and reports how many times it listed the
// store's records.
func ReapLost(s *Server, node string) (lists int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), cluster.StoreTimeout)
	defer cancel()
	list := func(ctx context.Context) ([]store.Record, error) {
		lists++
		return s.cluster.Store.List(ctx)
	}
	err = s.cluster.TakeOverLost(ctx, store.Lease{Node: node}, "was lost (a test)", list)
	return lists, err
}

// TakeOverFrom is TakeOver of an execution s believes node from owned
// when it was lost: a record another node claimed meanwhile is left to it
// (store.ErrConflict), as the lease loop and the request path leave it.
func TakeOverFrom(s *Server, id, from string) error {
	ctx, cancel := context.WithTimeout(context.Background(), cluster.StoreTimeout)
	defer cancel()
	r, err := s.cluster.Store.Get(ctx, id)
	if err != nil {
		return err
	}
	if r.Owner != from {
		return fmt.Errorf("%w: execution %s is node %s's now", store.ErrConflict, id, r.Owner)
	}
	_, err = s.cluster.TakeOver(ctx, r)
	return err
}

// DropPublishes keeps node's events from its cluster's stream from now,
// as if it were lost before publishing them; undo publishes again.
func DropPublishes(node string) (undo func()) {
	cluster.DroppedPublishes.Store(&node)
	return func() { cluster.DroppedPublishes.Store(nil) }
}

// StallRenewals keeps s's lease loop from renewing its lease from now, as
// if its process were stopped or cut off from the store (its other
// goroutines go on); resume lets it renew again.
func StallRenewals(s *Server) (resume func()) {
	cluster.Stalled.Store(s.cluster.Node, struct{}{})
	return sync.OnceFunc(func() { cluster.Stalled.Delete(s.cluster.Node) })
}

// ReserveKey writes, in s's store, a reservation of tenant's idempotency
// key for execution id, made by node at created, with sum the request
// body's SHA-256 (hex), as a start that never wrote its record leaves it.
func ReserveKey(s *Server, tenant, key, id, node, sum string, created time.Time) error {
	ctx, cancel := context.WithTimeout(context.Background(), cluster.StoreTimeout)
	defer cancel()
	_, err := s.cluster.Store.Reserve(ctx, store.Reservation{Key: cluster.ReservationKeyOf(tenant, key), Tenant: tenant, ID: id, Sum: sum,
		Node: node, Created: created, ExpiresAt: time.Now().Add(time.Hour)})
	return err
}

// Reservation is tenant's idempotency key's reservation in s's store.
func Reservation(s *Server, tenant, key string) (store.Reservation, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cluster.StoreTimeout)
	defer cancel()
	return s.cluster.Store.GetReservation(ctx, cluster.ReservationKeyOf(tenant, key))
}
