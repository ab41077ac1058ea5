package wasmhost

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/ptcx/ptcx/api"
)

// What became of one Idle call (run.idle).
const (
	idleRunning    = iota // Idle has not returned
	idleReturned          // Idle returned: its goroutine still drives the run
	idleHandedOver        // handover was called first: another goroutine drives the run
)

// idle lets an IdleDispatcher run the one call the guest waits on, on this
// goroutine. It reports false when the dispatcher handed the run over to
// another goroutine meanwhile (the call overstayed): this one must then
// leave the run alone.
func (r *run) idle() (kept bool, e *RunError) {
	r.idledAt = r.calls
	if r.idleCtx == nil {
		r.idleCtx, r.idleEnd = context.WithDeadlineCause(r.ctx, r.wallDeadline, errDeadline)
	}
	var state atomic.Int32
	handover := func() {
		if state.CompareAndSwap(idleRunning, idleHandedOver) {
			go r.drive(statusPending, nil)
		}
	}
	returned := false
	defer func() {
		p := recover()
		switch {
		case p != nil && state.CompareAndSwap(idleRunning, idleReturned):
			kept, e = true, &RunError{Kind: api.KindTrap, Message: "the host failed to run a nested call",
				Cause: fmt.Errorf("wasmhost: IdleDispatcher.Idle panicked: %v", p)}
		case p == nil && !returned:
			// Idle called runtime.Goexit: this goroutine is ending, so
			// another one drives the run.
			handover()
		}
	}()
	r.idler.Idle(r.idleCtx, handover)
	returned = true
	return state.CompareAndSwap(idleRunning, idleReturned), nil
}

// flush has an IdleDispatcher start the calls it holds.
func (r *run) flush() (e *RunError) {
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
