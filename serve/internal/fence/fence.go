// Package fence is a ptcx serve cluster node's proof of its lease
// (docs/cluster.md, "Fencing"). A cluster node acts for its
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
// epoch it started in (or was taken over or reclaimed in: serve/internal/cluster/fence.go)
// and its run's context carries it (a ticket); a lapse ends the epoch for
// good, so what ran in it stays stopped even once a later renewal lets
// the node take new work. It imports only the standard library.
package fence

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Margin is the margin on either side of the lease: the owner stops
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
func Margin(lease time.Duration) time.Duration { return lease / 5 }

// Fence is a node's proof of its lease. It is safe for concurrent use;
// Holds, Epoch and Live take no lock.
type Fence struct {
	node          string
	lease, margin time.Duration
	now           func() time.Time
	// lapsed hears of each lapse, with the epoch that ended, on the
	// goroutine that noticed it (the watchdog or a renewal).
	lapsed func(epoch uint64)
	// watch arms the watchdog timer, which notices a lapse without waiting
	// for a renewal (off in this package's tests, which call expire).
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

// New returns the fence of node's lease of that length, on the clock now
// (time.Now); lapsed hears of each lapse, with the epoch that ended, on the
// goroutine that noticed it (the watchdog or a renewal). Its first epoch,
// 1, is proven once the first renewal lands (Renewed).
func New(node string, lease time.Duration, now func() time.Time, lapsed func(epoch uint64)) *Fence {
	f := &Fence{node: node, lease: lease, margin: Margin(lease), now: now, lapsed: lapsed, watch: true}
	f.cur.Store(&fenceState{epoch: 1})
	return f
}

// Limit is how long after a renewal's start the node may act on it:
// lease − margin.
func (f *Fence) Limit() time.Duration { return f.lease - f.margin }

// Margin is the margin of the fence's lease (the package's Margin).
func (f *Fence) Margin() time.Duration { return f.margin }

// Holds reports whether the node may act now for what runs under epoch.
func (f *Fence) Holds(epoch uint64) bool {
	st := f.cur.Load()
	return st.valid && st.epoch == epoch && f.now().Sub(st.from) < f.Limit()
}

// Epoch is the current epoch, and whether the lease is proven now: what a
// new execution, or one taken over, runs under.
func (f *Fence) Epoch() (uint64, bool) {
	st := f.cur.Load()
	return st.epoch, st.valid && f.now().Sub(st.from) < f.Limit()
}

// Live reports whether the lease is proven now.
func (f *Fence) Live() bool {
	_, ok := f.Epoch()
	return ok
}

// Renewed records a successful renewal that started at start (its until
// was start + lease). A lease found lapsed first (the renewal came too
// late) ends its epoch; a renewal that itself landed past the limit
// proves nothing.
func (f *Fence) Renewed(start time.Time) {
	f.mu.Lock()
	now := f.now()
	st := *f.cur.Load()
	var ended uint64
	if st.valid && now.Sub(st.from) >= f.Limit() {
		ended, st = st.epoch, fenceState{epoch: st.epoch + 1}
	}
	if now.Sub(start) < f.Limit() && (!st.valid || start.After(st.from)) {
		st.from, st.valid = start, true
		f.armLocked(f.Limit() - now.Sub(start))
	}
	f.cur.Store(&st)
	f.mu.Unlock()
	if ended != 0 {
		f.lapsed(ended)
	}
}

// expire is the watchdog: it ends the epoch once its lease is past the
// limit with no renewal since.
func (f *Fence) expire() {
	f.mu.Lock()
	st := f.cur.Load()
	if !st.valid || f.now().Sub(st.from) < f.Limit() {
		f.mu.Unlock()
		return
	}
	f.cur.Store(&fenceState{epoch: st.epoch + 1})
	f.mu.Unlock()
	f.lapsed(st.epoch)
}

func (f *Fence) armLocked(d time.Duration) {
	if !f.watch {
		return
	}
	if f.timer == nil {
		f.timer = time.AfterFunc(d, f.expire)
		return
	}
	f.timer.Reset(d)
}

// Stop disarms the watchdog (the node leaves the cluster).
func (f *Fence) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watch = false
	if f.timer != nil {
		f.timer.Stop()
	}
}

// Refusal says why the node does not act now.
func (f *Fence) Refusal() string {
	st := f.cur.Load()
	if !st.valid {
		return fmt.Sprintf("node %s cannot prove its cluster lease is current (it lapsed, and no renewal has landed since)", f.node)
	}
	return fmt.Sprintf("node %s cannot prove its cluster lease is current for this execution (its last renewal began %v ago; it acts for at most lease − margin = %v after one, and the execution may have been declared lost since)",
		f.node, f.now().Sub(st.from).Round(time.Millisecond), f.Limit())
}

// Ticket is the epoch a run's context carries: what it runs under.
type Ticket struct {
	f     *Fence
	epoch uint64
}

type ticketKey struct{}

// WithTicket returns ctx carrying epoch of f: a run's context, which the
// guard on its calls and its session saves check.
func WithTicket(ctx context.Context, f *Fence, epoch uint64) context.Context {
	return context.WithValue(ctx, ticketKey{}, &Ticket{f: f, epoch: epoch})
}

// TicketOf is the ticket ctx carries, nil for none (no cluster).
func TicketOf(ctx context.Context) *Ticket {
	t, _ := ctx.Value(ticketKey{}).(*Ticket)
	return t
}

// Holds reports whether the node may act now for what runs under t.
func (t *Ticket) Holds() bool { return t.f.Holds(t.epoch) }

// Refusal says why the node does not act for t now.
func (t *Ticket) Refusal() string { return t.f.Refusal() }

// Check is nil while what runs under ctx may act: it carries no ticket
// (no cluster), or its epoch holds.
func Check(ctx context.Context) error {
	t := TicketOf(ctx)
	if t == nil || t.Holds() {
		return nil
	}
	return fmt.Errorf("serve: %s", t.Refusal())
}
