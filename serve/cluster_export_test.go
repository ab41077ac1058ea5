package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ptcx/ptcx/serve/store"
)

// Crash ends s's part in its cluster at once, as if its process were
// killed: no more lease renewals, record writes or answers to other nodes.
func Crash(s *Server) {
	if s.cluster != nil {
		s.cluster.crash()
	}
}

// NodeName is the name s has in its cluster ("" without one).
func NodeName(s *Server) string {
	if s.cluster == nil {
		return ""
	}
	return s.cluster.node
}

// TakeOver has s claim the parked execution id, as a node does whose
// peer is gone; it returns nil when s holds it afterwards.
func TakeOver(s *Server, id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	r, err := s.cluster.st.Get(ctx, id)
	if err != nil {
		return err
	}
	_, err = s.cluster.takeOver(ctx, r)
	return err
}

// Holds reports whether s holds execution id in its table.
func Holds(s *Server, id string) bool { return s.table.lookup(id) != nil }

// HoldEvictions keeps s's record deletions of evicted executions waiting
// until the returned function is called (once; more calls do nothing).
func HoldEvictions(s *Server) (release func()) {
	s.cluster.holdEvictions.Lock()
	return sync.OnceFunc(s.cluster.holdEvictions.Unlock)
}

// InStore reports whether the store holds execution id's record.
func InStore(s *Server, id string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	_, err := s.cluster.st.Get(ctx, id)
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
