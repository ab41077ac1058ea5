package executor

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptcx/ptcx/api"
)

// cancelGrace is how long a cancelled or timed-out body is given to return
// before the call settles without it.
const cancelGrace = 100 * time.Millisecond

// body is the lifetime of one tool body: phase 7 (dispatch), from the start
// of the body to the settlement of its call. It settles the call exactly
// once, whichever comes first:
//
//   - the body returns (or panics): its outcome is the call's;
//   - the body's context ends (the tool's timeout, the caller's
//     cancellation) and the body has not returned cancelGrace later: the
//     call settles without it, and its late outcome is dropped;
//   - the body ends its goroutine (runtime.Goexit): the call is INTERNAL.
//
// After the settlement it tells then, once, on the goroutine that settled.
// A settlement that did not wait for the body's goroutine (the last two
// cases) then calls lost: a goroutine lent to the body by someone else
// (the inline path, inline.go) must be given up for.
//
// run_code's own body (a transport) is never settled without it: it stops
// promptly on cancellation and must settle its nested calls first.
//
// Who runs the body decides only the goroutine: launch runs it on a new
// one (dispatch waits for the settlement), the inline path on the runtime's
// own goroutine, which wasmhost lends (inline.go).
type body struct {
	x       *execution
	ctx     context.Context // the call's
	bodyCtx context.Context // ctx under the tool's timeout
	cancel  context.CancelFunc
	then    settler
	lost    func() // nil when nothing was lent

	settled atomic.Bool
	mu      sync.Mutex  // guards grace
	grace   *time.Timer // armed when bodyCtx is done

	// bodyCtx is watched (to arm grace) by w when it is the shared watch
	// of ctx (watch.go), else by a watcher of its own, which stop ends.
	w          *watch
	solo       bool  // added as w.solo (written by the goroutine that adds and removes it)
	linked     bool  // in w's list; guarded by w.mu, as prev and next
	prev, next *body // in w's list
	stop       func() bool

	returned bool // the body returned, and its outcome settled the call (written by the settling goroutine)
}

// settler is told, once, that a call has its outcome (body.then).
type settler interface{ settled() }

// noSettler is the settler of run_code's own body, which needs no telling.
type noSettler struct{}

func (noSettler) settled() {}

// doneSettler closes its channel.
type doneSettler chan struct{}

func (d doneSettler) settled() { close(d) }

// startBody marks the body of x started and returns its lifetime, or, when
// ctx is already done, settles the call as never dispatched (telling then)
// and returns nil. w, when not nil, is the shared watch of ctx (watch.go):
// a body without a timeout of its own is watched by it instead of by a
// context.AfterFunc of its own.
func (x *execution) startBody(ctx context.Context, then settler, lost func(), w *watch) *body {
	if ctx.Err() != nil {
		x.fail(aborted(ctx, api.CodeAbortedBeforeDispatch, "the call was cancelled before it was dispatched"))
		then.settled()
		return nil
	}
	x.ran = true
	if x.parent != nil || len(x.e.cfg.onResult) > 0 {
		x.bodyFrom = monotonic() // for the run's ledger and Notification.Body
	}
	x.e.notifyStart(x)
	b := &x.life
	b.x, b.ctx, b.bodyCtx, b.then, b.lost = x, ctx, ctx, then, lost
	if t := x.def.Timeout(); t > 0 {
		b.bodyCtx, b.cancel = context.WithTimeout(ctx, t)
	}
	switch {
	case x.def.Transport():
	case b.cancel == nil && w != nil: // bodyCtx is ctx
		b.w = w
		w.add(b)
	default:
		b.stop = context.AfterFunc(b.bodyCtx, b.armGrace)
	}
	return b
}

// done reports whether nothing refers to b any more once its call has
// committed: the body returned and settled the call itself, and no timer
// or watcher of its own may still run (a shared watch let it go before it
// settled, and armed no grace timer). Call it on the goroutine that
// settled the call, after it did.
func (b *body) done() bool {
	return b.returned && b.stop == nil && b.cancel == nil && b.grace == nil
}

// unwatch stops watching bodyCtx.
func (b *body) unwatch() {
	switch {
	case b.w != nil:
		b.w.remove(b)
	case b.stop != nil:
		b.stop()
	}
}

// run runs the body on the calling goroutine and settles the call with its
// outcome. It returns once the body returned, even when the call settled
// without it meanwhile. If the body ends the goroutine instead, the
// deferred settlement still runs as it unwinds.
func (b *body) run() {
	returned := false
	defer func() {
		if !returned {
			b.unwatch()
			b.settleWithout(outcome{err: internal(b.x.req.Tool+" ended its goroutine (runtime.Goexit) instead of returning", nil)})
		}
	}()
	var o outcome
	o.err = safely(func() (err error) { o.out, err = b.x.callBody(b.bodyCtx); return err })
	returned = true
	b.unwatch()
	b.settle(o, b.bodyCtx.Err() != nil, true)
}

// armGrace runs when the body's context is done: cancelGrace later, the
// call settles without the body.
func (b *body) armGrace() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.grace = time.AfterFunc(cancelGrace, func() {
		b.settleWithout(outcome{err: b.bodyCtx.Err()})
	})
}

// settleWithout settles the call without waiting for the body's goroutine,
// and gives up what was lent to it.
func (b *body) settleWithout(o outcome) {
	if b.settle(o, true, false) && b.lost != nil {
		b.lost()
	}
}

// settle records o as the call's outcome and calls then, unless the call
// has settled already; it reports whether it settled it. late means
// bodyCtx was done: an outcome without an error then takes bodyCtx's;
// returned, that the body returned o.
func (b *body) settle(o outcome, late, returned bool) bool {
	if b.settled.Swap(true) {
		return false
	}
	b.returned = returned
	if returned && b.w != nil {
		// The shared watch arms grace only while b is in its list, under
		// its lock, and unwatch took b out under that lock: grace is
		// settled and seen here without b.mu.
		if b.grace != nil {
			b.grace.Stop()
		}
	} else {
		b.mu.Lock()
		if b.grace != nil {
			b.grace.Stop()
		}
		b.mu.Unlock()
	}
	if late && o.err == nil {
		o.err = b.bodyCtx.Err()
	}
	if b.x.bodyFrom != 0 {
		b.x.bodyTime = time.Duration(monotonic() - b.x.bodyFrom)
	}
	b.x.conclude(b.ctx, b.bodyCtx, o)
	if b.cancel != nil {
		b.cancel()
	}
	b.then.settled()
	return true
}

// clockBase is where monotonic counts from.
var clockBase = time.Now()

// monotonic is the monotonic clock, in nanoseconds from 1: one clock read,
// where time.Now reads two (the wall clock too). A body's time is taken
// with it once per nested call.
func monotonic() int64 { return int64(time.Since(clockBase)) + 1 }
