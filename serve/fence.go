package serve

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptcx/ptcx/executor"
)

// Fencing (docs/cluster.md, "Fencing"). A cluster node acts for its
// executions — dispatches their nested calls, answers a client from its
// copy of them, writes their parked bytes, session state and records —
// only while it can prove its lease is current. The proof is local and
// costs one atomic load and one clock read: the time since the start of
// its last successful lease renewal (whose until was computed from that
// start) on the monotonic clock, which keeps running while the process is
// stopped (SIGSTOP, a paused VM), is under lease − margin. The other
// nodes declare it lost, and reap or take over what it owned, only once
// their wall clock is past that lease's until + margin.
//
// Each stretch of proven lease is an epoch. An execution runs under the
// epoch it started in (or was taken over or reclaimed in: cluster_fence.go)
// and its run's context carries it (a ticket); a lapse ends the epoch for
// good, so what ran in it stays stopped even once a later renewal lets
// the node take new work.

// fenceMargin is the margin on either side of the lease: the owner stops
// acting at lease − margin after its last renewal started, the others act
// at lease + margin. It is lease/5 (200 ms for the 1 s minimum, 2 s for the
// default 10 s, 60 s for the 5 min maximum). Why a fifth: renewals come
// every lease/3, so the owner's limit of 0.8 × lease leaves two renewals
// (at lease/3 and 2·lease/3) the chance to land before it stops, not one;
// a margin of 1 s or more would leave a 1 s lease none. The 2 × margin
// between the owner stopping and the others acting (0.4 × lease) absorbs
// the skew between the nodes' wall clocks (a lease's until is a wall time
// that the others compare with their own clock): under 2 × margin, the
// owner has stopped before any other node acts.
func fenceMargin(lease time.Duration) time.Duration { return lease / 5 }

// fence is a node's proof of its lease. holds and live are safe for
// concurrent use and take no lock.
type fence struct {
	node          string
	lease, margin time.Duration
	now           func() time.Time
	// lapsed hears of each lapse, with the epoch that ended, on the
	// goroutine that noticed it (the watchdog or a renewal).
	lapsed func(epoch uint64)
	// watch arms the watchdog timer, which notices a lapse without waiting
	// for a renewal (off in unit tests, which call expire).
	watch bool

	mu    sync.Mutex // serialises renewals and lapses
	timer *time.Timer
	cur   atomic.Pointer[fenceState]
}

// fenceState is one instant of the proof, replaced whole.
type fenceState struct {
	epoch uint64
	from  time.Time // when the renewal that proves the lease started (with its monotonic reading)
	valid bool      // false before the first renewal, and from a lapse to the next renewal
}

func newFence(node string, lease time.Duration, now func() time.Time, lapsed func(uint64)) *fence {
	f := &fence{node: node, lease: lease, margin: fenceMargin(lease), now: now, lapsed: lapsed, watch: true}
	f.cur.Store(&fenceState{epoch: 1})
	return f
}

// limit is how long after a renewal's start the node may act on it.
func (f *fence) limit() time.Duration { return f.lease - f.margin }

// holds reports whether the node may act now for what runs under epoch.
func (f *fence) holds(epoch uint64) bool {
	st := f.cur.Load()
	return st.valid && st.epoch == epoch && f.now().Sub(st.from) < f.limit()
}

// epoch is the current epoch, and whether the lease is proven now: what a
// new execution, or one taken over, runs under.
func (f *fence) epoch() (uint64, bool) {
	st := f.cur.Load()
	return st.epoch, st.valid && f.now().Sub(st.from) < f.limit()
}

// live reports whether the lease is proven now.
func (f *fence) live() bool {
	_, ok := f.epoch()
	return ok
}

// renewed records a successful renewal that started at start (its until
// was start + lease). A lease found lapsed first (the renewal came too
// late) ends its epoch; a renewal that itself landed past the limit
// proves nothing.
func (f *fence) renewed(start time.Time) {
	f.mu.Lock()
	now := f.now()
	st := *f.cur.Load()
	var ended uint64
	if st.valid && now.Sub(st.from) >= f.limit() {
		ended, st = st.epoch, fenceState{epoch: st.epoch + 1}
	}
	if now.Sub(start) < f.limit() && (!st.valid || start.After(st.from)) {
		st.from, st.valid = start, true
		f.armLocked(f.limit() - now.Sub(start))
	}
	f.cur.Store(&st)
	f.mu.Unlock()
	if ended != 0 {
		f.lapsed(ended)
	}
}

// expire is the watchdog: it ends the epoch once its lease is past the
// limit with no renewal since.
func (f *fence) expire() {
	f.mu.Lock()
	st := f.cur.Load()
	if !st.valid || f.now().Sub(st.from) < f.limit() {
		f.mu.Unlock()
		return
	}
	f.cur.Store(&fenceState{epoch: st.epoch + 1})
	f.mu.Unlock()
	f.lapsed(st.epoch)
}

func (f *fence) armLocked(d time.Duration) {
	if !f.watch {
		return
	}
	if f.timer == nil {
		f.timer = time.AfterFunc(d, f.expire)
		return
	}
	f.timer.Reset(d)
}

// stop disarms the watchdog (the node leaves the cluster).
func (f *fence) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watch = false
	if f.timer != nil {
		f.timer.Stop()
	}
}

// refusal says why the node does not act now.
func (f *fence) refusal() string {
	st := f.cur.Load()
	if !st.valid {
		return fmt.Sprintf("node %s cannot prove its cluster lease is current (it lapsed, and no renewal has landed since)", f.node)
	}
	return fmt.Sprintf("node %s cannot prove its cluster lease is current for this execution (its last renewal began %v ago; it acts for at most lease − margin = %v after one, and the execution may have been declared lost since)",
		f.node, f.now().Sub(st.from).Round(time.Millisecond), f.limit())
}

// epochTicket is the epoch a run's context carries.
type epochTicket struct {
	f     *fence
	epoch uint64
}

type ticketKey struct{}

func withTicket(ctx context.Context, f *fence, epoch uint64) context.Context {
	return context.WithValue(ctx, ticketKey{}, &epochTicket{f: f, epoch: epoch})
}

func ticketOf(ctx context.Context) *epochTicket {
	t, _ := ctx.Value(ticketKey{}).(*epochTicket)
	return t
}

// fenceCheck is nil while what runs under ctx may act: it carries no
// ticket (no cluster), or its epoch holds.
func fenceCheck(ctx context.Context) error {
	t := ticketOf(ctx)
	if t == nil || t.f.holds(t.epoch) {
		return nil
	}
	return fmt.Errorf("serve: %s", t.f.refusal())
}

// withFence gives a cluster node's executors the fence as a guard: the
// last phase before a call's body is dispatched (executor's phase 6, on
// every path, the inline one included), so a refused call fails DENIED
// and its body never runs. Without a store it adds nothing.
func (s *Server) withFence(cfg executor.Config) executor.Config {
	if s.cfg.Store == nil || s.cfg.Store.Kind == storeMemory {
		return cfg
	}
	return cfg.WithGuard("", s.fenceGuard)
}

// fenceGuard refuses every call while the node cannot prove its lease:
// a call of an execution's run by the epoch its context carries, any
// other (a direct call, /mcp) by the node's lease alone.
func (s *Server) fenceGuard(ctx context.Context, _ executor.Request) (string, error) {
	if t := ticketOf(ctx); t != nil {
		if t.f.holds(t.epoch) {
			return "", nil
		}
		return t.f.refusal() + ": the call was not dispatched", nil
	}
	c := s.cluster
	if c == nil || c.fence.live() {
		return "", nil
	}
	return c.fence.refusal() + ": the call was not dispatched", nil
}
