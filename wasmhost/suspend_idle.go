package wasmhost

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// Idle suspension. A run with Program.SuspendIdle that has waited that long
// since its guest last ran, with nothing to feed it, asks Program.Suspend
// there (Quiescence.Idle): it waits on timers, or on calls whose bodies run
// elsewhere, and its instance and committed memory sit unused meanwhile.
// Suspended there, it differs from a suspension after an export in two
// ways, both kept in this process until the run resumes:
//
//   - its calls in flight are not forgotten: the run's inbox stays open
//     (inbox.keep), their answers land there and Suspended.Answered is
//     closed at the first; a resume with Resumption.Attach takes the inbox
//     over, so those calls answer the resumed run (a snapshot keeps call
//     ids) and none is dispatched again. Their arguments stay counted
//     against the resumed run's MaxInFlightArgBytes, as the snapshot
//     counts them, until they answer it.
//   - its snapshot is held in host memory: the buffer's capacity is
//     charged to the Runtime's committed memory (never the run's memory
//     limit) in place of the run's commitment, and counted in
//     Usage.SuspendedBytes, until a resume's admission takes it as part of
//     its own (Attach or Recycle), or End, Release or RecycleSnapshot gives
//     it back.

// idleHold is what an idle suspension holds in this process.
type idleHold struct {
	rt *Runtime
	// charge is the snapshot's bytes charged to committed memory, until
	// taken over by a resume or given back.
	charge int64
	// inbox is the run's, kept open while calls are in flight; nil when
	// none was. answered is closed at its first outcome after the
	// suspension.
	inbox    *inbox
	answered chan struct{}
	// over is set once a resume took the hold over, or it was released.
	over atomic.Bool
}

// idleWatch times the run's waits for Program.SuspendIdle, on the run's
// goroutine. Without SuspendIdle it is zero and does nothing. When the
// guest last ran is the run's (run.ranAt), so that a goroutine taking the
// run over (armHandover) finds the idle point where it was.
type idleWatch struct {
	r     *run
	timer *time.Timer
	asked bool // Suspend was asked at an idle point since the guest last ran
}

func newIdleWatch(r *run) idleWatch {
	if r.prog.Suspend == nil || r.prog.SuspendIdle <= 0 {
		return idleWatch{}
	}
	if r.ranAt == 0 {
		r.ranAt = r.since()
	}
	return idleWatch{r: r}
}

// ran says the guest just ran (an export returned).
func (w *idleWatch) ran() {
	if w.r != nil {
		w.r.ranAt, w.asked = w.r.since(), false
	}
}

// due returns what a wait selects on for the idle point: a timer that
// fires SuspendIdle after the guest last ran, or nil once Suspend was
// asked there (until the guest runs again), or without SuspendIdle.
func (w *idleWatch) due() <-chan time.Time {
	if w.r == nil || w.asked {
		return nil
	}
	d := w.r.untilIdle()
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	return w.timer.C
}

// untilIdle is how long until the run's idle point.
func (r *run) untilIdle() time.Duration {
	return time.Duration(r.ranAt + int64(r.prog.SuspendIdle) - r.since())
}

// pause stops the timer as a wait ends some other way.
func (w *idleWatch) pause() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

func (w *idleWatch) stop() { w.pause() }

// armHandover, while the run's goroutine is lent to IdleDispatcher.Idle
// (loan l), has the run handed over at its idle point: a new goroutine
// then drives it, and asks Program.Suspend there at once, while the lent
// one stays in the call, whose outcome answers through the inbox as any
// other's. It reports whether it armed anything (with SuspendIdle), which
// the goroutine disarms if Idle returns first.
func (r *run) armHandover(l *loan) bool {
	if r.prog.Suspend == nil || r.prog.SuspendIdle <= 0 {
		return false
	}
	r.lent.Store(l)
	if r.handTimer == nil {
		r.handTimer = time.AfterFunc(r.untilIdle(), r.handIdle)
	} else {
		r.handTimer.Reset(r.untilIdle())
	}
	return true
}

// handIdle is the hand-over timer's.
func (r *run) handIdle() {
	if l := r.lent.Load(); l != nil {
		l.handover()
	}
}

// disarmHandover undoes armHandover once Idle returned with the run still
// this goroutine's.
func (r *run) disarmHandover() {
	r.lent.Store(nil)
	r.handTimer.Stop()
}

// ask asks Program.Suspend at the idle point, unless there is something to
// feed the guest after all (an outcome or a timer that came as the idle
// timer fired).
func (w *idleWatch) ask() (bool, *RunError) {
	w.asked = true
	if at, ok := w.r.timers.Next(); ok && !at.After(time.Now()) {
		return false, nil
	}
	return w.r.quiescent(nil, true)
}

// idleSuspension returns the idle suspension out carries, if it does.
func idleSuspension(out Outcome) *Suspended {
	if s := out.Suspended; s != nil && s.hold != nil {
		return s
	}
	return nil
}

// holdInbox keeps the run's inbox open for s, an idle suspension the run
// ended in, while calls it dispatched are in flight; else closes it.
func (r *run) holdInbox(s *Suspended) {
	for _, c := range s.Calls {
		if c.State == CallDispatched {
			s.hold.inbox = r.inbox
			s.hold.answered = r.inbox.keep()
			return
		}
	}
	r.inbox.close()
}

// keep keeps the inbox open past its run's end, for an idle suspension,
// and returns the channel closed at the first outcome queued (at once when
// one is).
func (b *inbox) keep() chan struct{} {
	ch := make(chan struct{})
	b.mu.Lock()
	if len(b.queue) > 0 {
		close(ch)
	} else {
		b.answered = ch
	}
	b.mu.Unlock()
	return ch
}

// attach hands a kept inbox to the run resuming from its suspension.
func (b *inbox) attach() {
	b.mu.Lock()
	b.answered = nil
	b.mu.Unlock()
}

// holdSnapshot turns a run's admission into an idle suspension's charge:
// the run's place and committed bytes are given back, and the snapshot's
// charge bytes taken, in one step. The charge is at most what the run
// committed but for a recycled buffer larger than its snapshot
// (takeSnapshotBuffer), which may take the sum past the cap for as long as
// it is held: runs then wait for admission, as they would for the memory.
func (rt *Runtime) holdSnapshot(committed, charge int64) {
	rt.admission.Convert(committed, charge, rt.suspendedCounter())
}

// unholdSnapshot gives an idle suspension's charge back.
func (rt *Runtime) unholdSnapshot(charge int64) {
	rt.admission.Uncharge(charge, rt.suspendedCounter())
}

// takeOver gives h's charge to a run being admitted, which committed the
// rest of its memory (admit): the bytes stay committed, now the run's.
func (h *idleHold) takeOver() {
	h.rt.admission.Hand(h.charge, h.rt.suspendedCounter())
	h.charge = 0
}

// Answered returns a channel closed when a call that an idle suspension
// left in flight answers (or had answered by the time the suspended run
// ended): a reason to resume it. It is nil, which a select never picks,
// when s is not idle or left no call in flight.
func (s *Suspended) Answered() <-chan struct{} {
	if s.hold == nil || s.hold.answered == nil {
		return nil
	}
	return s.hold.answered
}

// Release gives up what an idle suspension holds in this process: its
// charge on the Runtime's committed memory, and its calls in flight, whose
// answers are dropped from then on (a resume of the snapshot, here without
// Attach or in another process, dispatches them again). The snapshot stays
// the caller's. Release (or End, or RecycleSnapshot) a Suspended that will
// not be resumed here: until then it holds both. It is a no-op for a
// suspension that is not idle, once a resume took it over (Attach,
// Recycle), and when called again. It is safe to call from any goroutine,
// but not concurrently with a Resume of s.
func (s *Suspended) Release() {
	h := s.hold
	if h == nil || !h.over.CompareAndSwap(false, true) {
		return
	}
	if h.inbox != nil {
		h.inbox.close()
	}
	if h.charge > 0 {
		h.rt.unholdSnapshot(h.charge)
		h.charge = 0
	}
}

// End ends the suspended run without resuming it, as the run would have
// ended had it waited live, for a host that gives up waiting on an idle
// suspension (its wall deadline came, its caller cancelled, the Runtime
// closed). It releases s (Release) and returns the run's Stats, its wall
// time counting the time since it was suspended, and a *RunError with the
// logs written so far: a wall-time timeout when cause is
// context.DeadlineExceeded (errors.Is), what a run stopped by Close gets
// for ErrClosed, else an abort (KindAbort) with cause. The snapshot stays
// the caller's.
func (s *Suspended) End(cause error) (Outcome, error) {
	s.Release()
	st := s.stats
	st.Wall += time.Since(s.At)
	var e *RunError
	switch {
	case errors.Is(cause, ErrClosed):
		e = closedError()
	case errors.Is(cause, context.DeadlineExceeded):
		e = timeoutError(s.limits, true, errDeadline)
	default:
		e = abortError(cause)
	}
	e.Logs = s.logs
	return Outcome{Stats: st}, e
}

// errAttach says why Resumption.Attach cannot be taken over.
func errAttach(s *Suspended, snapshot []byte) error {
	switch {
	case !sameBuffer(s.Snapshot, snapshot):
		return errors.New("wasmhost: Resumption.Attach is not the Suspended of the snapshot being resumed")
	case s.hold == nil:
		return errors.New("wasmhost: Resumption.Attach is not an idle suspension (Suspended.Idle): it keeps no call in this process")
	case s.hold.over.Load():
		return errors.New("wasmhost: Resumption.Attach was released, or a resume took it over already")
	}
	return nil
}
