package wasmhost

import (
	"time"
)

// errNeverSettles is the message of a program that waits on nothing.
const errNeverSettles = "the program is awaiting a promise that nothing can resolve: " +
	"no nested call or timer is pending, so it would never finish"

// loop feeds the guest nested-call outcomes and timers until it settles,
// on the guest's goroutine. Outcomes that are ready go first, then timers
// that are due; when there is nothing to feed it waits for the next one,
// the wall deadline, or the end of the run's context (a cancellation or
// Close).
func (r *run) loop(status int32) (int32, *RunError) {
	wall := time.NewTimer(time.Until(r.wallDeadline))
	defer wall.Stop()
	alarm := time.NewTimer(time.Hour)
	alarm.Stop()
	defer alarm.Stop()
	var batch []completion
	for status == statusPending {
		batch = r.inbox.take(batch)
		if len(batch) > 0 {
			for i, c := range batch {
				var e *RunError
				if status, e = r.resume(c); e != nil {
					return 0, e
				}
				batch[i] = completion{}
				if status != statusPending {
					break
				}
			}
			continue
		}
		now := time.Now()
		if id, ok := r.timers.due(now); ok {
			var e *RunError
			if status, e = r.fire(id); e != nil {
				return 0, e
			}
			continue
		}
		if r.pending == 0 && r.timers.len() == 0 {
			return 0, &RunError{Kind: KindException, Message: errNeverSettles}
		}
		if at, ok := r.timers.next(); ok {
			alarm.Reset(at.Sub(now))
		}
		select {
		case <-r.inbox.wake:
		case <-alarm.C:
		case <-wall.C:
			return 0, r.timeout(true, errDeadline)
		case <-r.ctx.Done():
			return 0, r.cancelled()
		}
		alarm.Stop()
	}
	return status, nil
}
