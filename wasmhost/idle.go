package wasmhost

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost/internal/abi"
)

// A loan is the run's goroutine, lent to IdleDispatcher.Idle to carry the
// one call the guest waits on. Exactly one of two things ends it, whichever
// comes first:
//
//   - Idle returns (giveBack): the goroutine goes on driving the run;
//   - the dispatcher calls handover: the call settled without the goroutine,
//     which is stuck in a body, so a new goroutine takes the run over, and
//     the lent one must leave the run alone when it comes back.
type loan struct {
	r     *run
	state atomic.Int32
}

const (
	loaned     = iota // Idle has not returned
	givenBack         // Idle returned first
	handedOver        // handover was called first
)

// handover is the function Idle is given.
func (l *loan) handover() {
	if l.state.CompareAndSwap(loaned, handedOver) {
		go l.r.drive(abi.StatusPending, nil)
	}
}

// newLoan returns a new loan of r's goroutine, from a slab (fromSlab): a
// loan is never reused, since a late handover of one given back must stay
// a no-op.
func (r *run) newLoan() *loan {
	l := fromSlab(&r.loans)
	l.r = r
	return l
}

// giveBack ends the loan as Idle returns, and reports whether the goroutine
// still drives the run.
func (l *loan) giveBack() bool {
	return l.state.CompareAndSwap(loaned, givenBack)
}

// idle lends this goroutine to the IdleDispatcher for the one call the guest
// waits on. It reports false when the run was handed over meanwhile: this
// goroutine must then leave the run alone.
func (r *run) idle() (kept bool, e *RunError) {
	r.idledAt = r.calls
	if r.idleCtx == nil {
		r.idleCtx, r.idleEnd = context.WithDeadlineCause(r.ctx, r.wallDeadline, errDeadline)
	}
	l := r.newLoan()
	armed := r.armHandover(l) // at the idle point (Program.SuspendIdle)
	returned := false
	defer func() {
		p := recover()
		switch {
		case p != nil && l.giveBack():
			if armed {
				r.disarmHandover()
			}
			kept, e = true, &RunError{Kind: api.KindTrap, Message: "the host failed to run a nested call",
				Cause: fmt.Errorf("wasmhost: IdleDispatcher.Idle panicked: %v", p)}
		case p == nil && !returned:
			// Idle called runtime.Goexit: this goroutine is ending, so
			// another one drives the run.
			l.handover()
		}
	}()
	r.idler.Idle(r.idleCtx, l.handover)
	returned = true
	if !l.giveBack() {
		return false, nil // handed over: the run is another goroutine's
	}
	if armed {
		r.disarmHandover()
	}
	return true, nil
}

// flush has an IdleDispatcher start the calls it holds.
func (r *run) flush() (e *RunError) {
	r.unflushed = 0
	if e := r.releaseHeld(); e != nil {
		return e
	}
	if r.idler == nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			e = &RunError{Kind: api.KindTrap, Message: "the host failed to dispatch a nested call",
				Cause: fmt.Errorf("wasmhost: IdleDispatcher.Flush panicked: %v", p)}
		}
	}()
	r.idler.Flush()
	return nil
}
