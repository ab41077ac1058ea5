package wasmhost

import (
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost/internal/abi"
)

// errNeverSettles is the message of a program that waits on nothing;
// errNeverSettlesPython is a Python program's, in Python's words.
const (
	errNeverSettles = "the program is awaiting a promise that nothing can resolve: " +
		"no nested call or timer is pending, so it would never finish"
	errNeverSettlesPython = "the program is awaiting a future that nothing can resolve: " +
		"no nested call or timer is pending, so it would never finish"
)

// stalled ends a program that waits on nothing. The guest's ptcx_stalled
// reports it out of memory when memory ran out on the way (the engine drops
// a promise reaction it cannot queue, so a microtask chain that exhausts
// memory ends waiting on nothing: docs/abi.md); otherwise, or for a guest
// without the export, it can never settle.
func (r *run) stalled() (int32, *RunError) {
	if f := r.inst.mod.Function(abi.ExportStalled); f != nil {
		if status, e := r.call(f); e != nil || status != abi.StatusPending {
			return status, e
		}
	}
	if r.rt.lang == api.LanguagePython {
		return 0, &RunError{Kind: api.KindException, Message: errNeverSettlesPython}
	}
	return 0, &RunError{Kind: api.KindException, Message: errNeverSettles}
}

// loop feeds the guest nested-call outcomes and timers until it settles,
// on the goroutine that drives the run. Outcomes that are ready go first,
// then timers that are due; when there is nothing to feed it waits for the
// next one, the wall deadline, or the end of the run's context (a
// cancellation or Close). When the guest waits on exactly one call and
// nothing else, an IdleDispatcher may run that call right here (run.idle).
// With Program.SuspendIdle, once the run has waited that long since the
// guest last ran, Program.Suspend is asked at that idle point (a run lent
// to the IdleDispatcher is handed over to a new goroutine there first:
// suspend_idle.go). passed reports that the run was handed over to another
// goroutine meanwhile, which then owns it.
func (r *run) loop(status int32) (_ int32, _ *RunError, passed bool) {
	r.unpark() // a goroutine taking the run over (run.idle) waits no more
	if status != abi.StatusPending {
		return status, nil, false // settled in its first export: no timer to make
	}
	wall := time.NewTimer(time.Until(r.wallDeadline))
	defer wall.Stop()
	alarm := time.NewTimer(time.Hour)
	alarm.Stop()
	defer alarm.Stop()
	var batch []completion
	// A run that may be suspended is asked at every quiescent point: after
	// each export that leaves it pending (not on resuming, before any).
	ask := r.askNext
	r.askNext = false
	idle := newIdleWatch(r)
	defer idle.stop()
	for status == abi.StatusPending {
		if ask {
			ask = false
			if yes, e := r.quiescent(nil, false); e != nil || yes {
				return statusSuspended, e, false
			}
		}
		batch = r.inbox.take(batch)
		if len(batch) > 0 {
			if r.since() >= r.wallAt { // the wall deadline, on the run's own clock (one read; time.Now reads two)
				return 0, r.timeout(true, errDeadline), false
			}
			for i, c := range batch {
				var e *RunError
				if e = r.flush(); e == nil {
					status, e = r.resume(c)
				}
				if e != nil {
					return 0, e, false
				}
				batch[i] = completion{}
				idle.ran()
				if status != abi.StatusPending {
					break
				}
				if r.prog.Suspend != nil {
					if yes, e := r.quiescent(batch[i+1:], false); e != nil || yes {
						return statusSuspended, e, false
					}
				}
			}
			continue
		}
		var now time.Time // read only when there are timers: most awaited calls have none
		if r.timers.Len() > 0 {
			now = time.Now()
			if id, ok := r.timers.Due(now); ok {
				var e *RunError
				if e = r.flush(); e == nil {
					status, e = r.fire(id)
				}
				if e != nil {
					return 0, e, false
				}
				idle.ran()
				ask = r.prog.Suspend != nil
				continue
			}
		}
		if r.pending == 0 && r.timers.Len() == 0 {
			status, e := r.stalled()
			return status, e, false
		}
		if r.idler != nil && r.pending == 1 && r.timers.Len() == 0 && r.calls != r.idledAt {
			if e := r.releaseHeld(); e != nil {
				return 0, e, false
			}
			r.park()
			r.giveSlot() // a tool's body runs here, or another goroutine takes the run over
			kept, e := r.idle()
			if e != nil {
				return 0, e, false
			}
			if !kept {
				return 0, nil, true
			}
			r.unpark()
			continue
		}
		if e := r.flush(); e != nil {
			return 0, e, false
		}
		if at, ok := r.timers.Next(); ok {
			alarm.Reset(at.Sub(now))
		}
		r.park()
		r.giveSlot() // it waits: the slot is another guest's meanwhile
		select {
		case <-r.inbox.wake:
		case <-alarm.C:
		case <-idle.due():
			r.unpark()
			alarm.Stop()
			if yes, e := idle.ask(); e != nil || yes {
				return statusSuspended, e, false
			}
			continue
		case <-r.prog.Recheck: // nil, never ready, without Suspend's Recheck
			r.unpark()
			alarm.Stop()
			idle.pause()
			ask = r.prog.Suspend != nil
			continue
		case <-wall.C:
			return 0, r.timeout(true, errDeadline), false
		case <-r.ctx.Done():
			return 0, r.cancelled(), false
		}
		r.unpark()
		alarm.Stop()
		idle.pause()
	}
	return status, nil, false
}
