package wasmhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
	"github.com/ptcx/ptcx/wasmhost/internal/timers"
)

// grace is how long Run waits, after a deadline or a cancellation, for the
// guest to stop by itself before it abandons it (see run.run).
const grace = 250 * time.Millisecond

// run is the state of one Run.
//
// The guest runs on a goroutine of its own (run.execute), which owns
// everything here but the fields marked otherwise. The goroutine that called
// Run waits for it, and abandons it if it does not stop in time.
type run struct {
	rt     *Runtime
	prog   Program
	disp   Dispatcher
	limits api.Limits
	tools  map[string]string // bound names, to their canonical strings

	ctx     context.Context // ends with the caller's or on Close; carries the run for the imports
	idler   IdleDispatcher  // disp, when it is one
	idledAt int             // calls when Idle was last called
	loans   []loan          // the loans idle has yet to lend (idle.go)
	idleCtx context.Context // ctx, ending also at the wall deadline; made by the first idle
	idleEnd context.CancelFunc
	done    chan runResult // the outcome, from the goroutine that finishes the run
	inst    *instance
	inbox   *inbox // safe for concurrent use
	timers  timers.Queue
	output  output
	// unflushed counts the guest's polls since its first call not yet
	// started (held for Suspend or by an IdleDispatcher), from 1; 0 when
	// there is none (poll, hostfuncs.go).
	unflushed int
	pending   int // calls dispatched and not yet resumed in the guest
	calls     int // calls dispatched
	// refusedCalls are calls refused for the size of their arguments: not
	// dispatched (not in Stats.Calls), but counted against MaxCalls.
	refusedCalls int
	committed    int64 // the guest memory charged to the Runtime's admission (admission.go)
	lastID       int32 // the id of the last call the guest made, dispatched or rejected
	argBytes     int   // arguments of the calls pending, summed (api.Limits.MaxInFlightArgBytes)
	result       json.RawMessage
	// While Program.Suspend is set (suspend.go): the calls the program
	// waits on, those made and not yet dispatched, and the snapshot once
	// suspended. A resumed run starts from resuming, with resumeAnswers.
	waiting       map[int32]*waitingCall
	held          []int32
	suspension    *Suspended
	resuming      *snapshot.State
	resumeAnswers []completion
	resumeHeld    []int32
	snapshotBuf   []byte    // where a suspension may write its snapshot (Resumption.SnapshotBuffer)
	askNext       bool      // the program just started: loop asks Program.Suspend first
	guestErr      *RunError // from the error import
	stopped       *RunError // why the host stopped the guest (run.stop)
	// taking is the idle suspension a resumed run takes over once
	// admitted (its charge; attached, its inbox too): suspend_idle.go.
	taking   *idleHold
	attached bool
	// With Program.SuspendIdle (suspend_idle.go): when the guest last ran
	// (see since), and the hand-over at the idle point of a goroutine lent
	// to IdleDispatcher.Idle: the loan it hands over, and its timer.
	ranAt     int64
	lent      atomic.Pointer[loan]
	handTimer *time.Timer

	onLog LogHook // from the caller's context (loghook.go), or nil

	began        time.Time
	wallDeadline time.Time
	wallAt       int64 // wallDeadline as an instant (see since)

	// The current export (compute.go).
	metered  bool  // its time counts toward the compute limit
	hasSlot  bool  // it holds a guest slot
	slotAt   int64 // when it took the slot
	slotLook int64 // how long it will have held the slot when polled next looks at the waiters
	goAt     int64 // when it last looked for ready goroutines (compute.go)
	cpuOn    bool  // it is charged CPU time: the goroutine is locked to its thread

	// mu serialises the imports with abandonment: once abandoned is set,
	// no import does anything, so nothing reaches the Dispatcher or the
	// output after Run returned.
	mu        sync.Mutex
	abandoned bool
	// sessionHeld is set once the run took its Program.Session's state
	// (session.go), which it then gives back when it ends.
	sessionHeld bool
	parking     parking // releases the instance's releasable exports while the run waits

	// Shared with the waiting goroutine and the watchdog. Instants are
	// monotonic nanoseconds since began (see run.since).
	compute  atomic.Int64 // nanoseconds spent in exports that returned
	inExport atomic.Int64 // start of the current export, or 0
	deadline atomic.Int64 // deadline of the current export, or 0
	memory   atomic.Int64 // guest memory after the last export
	overrun  chan struct{}
	watchdog *time.Timer
	watchAt  atomic.Int64 // when the watchdog fires (see since), or 0 when it is not armed
	// cpuMu guards the thread charged CPU time, for the watchdog: while it
	// is held, the export does not end.
	cpuMu   sync.Mutex
	cpuTid  int   // the guest's thread, or 0 when the export is not charged CPU time
	cpuBase int64 // the thread's CPU clock minus the export's charge at startCPU
}

func newRun(rt *Runtime, p Program, d Dispatcher) (*run, error) {
	r := &run{rt: rt, prog: p, disp: d, limits: p.Limits.Within(rt.limits), inbox: newInbox(),
		overrun: make(chan struct{}, 1), done: make(chan runResult, 1)}
	// One call cannot hold more than all calls in flight may: a lower
	// in-flight limit lowers the per-call one with it, so that a call over
	// it is told to pass less data, not to await others.
	r.limits.MaxCallArgBytes = min(r.limits.MaxCallArgBytes, r.limits.MaxInFlightArgBytes)
	if p.Suspend != nil && rt.image == nil {
		return nil, errNoImage
	}
	if p.Session != nil && rt.image == nil {
		return nil, errSessionNoImage
	}
	if p.Session != nil && p.Suspend != nil {
		return nil, errors.New("wasmhost: a run in a Session cannot be suspended")
	}
	switch {
	case p.SuspendIdle < 0:
		return nil, fmt.Errorf("wasmhost: Program.SuspendIdle of %v is negative (0 means never at an idle point)", p.SuspendIdle)
	case p.SuspendIdle > 0 && p.Suspend == nil:
		return nil, errors.New("wasmhost: Program.SuspendIdle needs Program.Suspend, which it asks at idle points")
	}
	if p.Session != nil {
		if err := p.Session.bind(rt, rt.lang.Canonical()); err != nil {
			return nil, err
		}
	}
	r.idler, _ = d.(IdleDispatcher)
	r.tools = make(map[string]string, len(p.Tools))
	for _, name := range p.Tools {
		if !utf8.ValidString(name) {
			return nil, fmt.Errorf("wasmhost: tool name %q is not valid UTF-8", name)
		}
		if _, twice := r.tools[name]; twice {
			return nil, fmt.Errorf("wasmhost: tool name %q is given twice in Program.Tools", name)
		}
		r.tools[name] = name
	}
	r.output.limit = r.limits.OutputBytes
	return r, nil
}

// since returns the monotonic time from the start of the run to now, in
// nanoseconds: an instant of the run, never 0 once the run started.
func (r *run) since() int64 {
	return int64(time.Since(r.began)) + 1
}

// start sets the run's clock going: Run calls it first, so that the wall
// limit covers the wait for admission.
func (r *run) start() {
	r.began = time.Now()
	r.wallDeadline = r.began.Add(r.limits.WallTime)
	if d := r.prog.Deadline; !d.IsZero() && d.Before(r.wallDeadline) {
		r.wallDeadline = d
	}
	r.wallAt = max(int64(r.wallDeadline.Sub(r.began)), 0) + 1
}

// stop ends the run from inside an import: it records why and unwinds the
// guest through wazero, which turns the panic into the export's error.
func (r *run) stop(e *RunError) {
	if r.stopped == nil {
		r.stopped = e
	}
	panic(errStop)
}

type runResult struct {
	out Outcome
	err error
}

// run executes the program and waits for it.
//
// The guest stops at its deadlines, on cancellation and on Close: it polls
// the host every few thousand loop iterations of its code (the poll import,
// meter.go) and the host stops it there. As a last resort, if the guest is
// still running grace after a deadline or a cancellation (one bulk memory
// operation can take a while), Run returns without it and the goroutine
// discards the instance when the guest comes back.
//
// The guest runs on a goroutine of its own, a runner (internal/runners),
// so that Run can return without it; but with a guest ptcx built
// (Runtime.startInline), the program's first export runs on the caller's
// goroutine, which would only wait for a runner meanwhile: handing a run
// over and back wakes a thread each way, a tenth to a quarter of a
// trivial run's time on 2 cores (docs/performance.md, "Sessions"). Most
// programs settle in that export (those that make no call, every REPL
// feed); one left waiting on calls or timers goes on on a runner (wait).
// That export cannot be abandoned: it ends at a poll past its deadline,
// or at the end of one bulk memory operation (bounded by the memory
// limit), or when an import returns, since a Dispatcher or log hook that
// blocks holds the run's lock and Run waits for it anyway (abandon).
func (r *run) run(ctx context.Context) (Outcome, error) {
	// The run's context ends with the caller's or when the Runtime closes.
	base, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(r.rt.closing, func() { cancel(ErrClosed) })()
	r.ctx = context.WithValue(base, runKey{}, r)
	r.onLog = logHookOf(ctx)
	r.watchdog = time.AfterFunc(time.Hour, func() {
		r.watchAt.Store(0)
		select {
		case r.overrun <- struct{}{}:
		default:
		}
	})
	r.watchdog.Stop()
	defer r.watchdog.Stop()

	if !r.rt.startInline || r.resuming != nil {
		r.rt.runners.Start(r)
		return r.wait()
	}
	status, e, started := r.launch()
	switch {
	case !started: // finished in launch
	case e == nil && status == abi.StatusPending:
		r.rt.runners.Start(pendingRun{r, status})
		return r.wait()
	default:
		r.drive(status, e) // settled (or failed) in its first export: finished here
	}
	res := <-r.done
	return res.out, res.err
}

// wait waits for the run's outcome from the runner driving it, and
// abandons the run if it does not stop in time (run.run).
func (r *run) wait() (Outcome, error) {
	// Past the wall deadline by grace, the run ends whatever the guest's
	// goroutine is doing: in an export the watchdog says so sooner, but a
	// dispatcher can hold it outside one too (IdleDispatcher.Idle).
	late := time.NewTimer(time.Until(r.wallDeadline) + grace)
	defer late.Stop()
	stopping := r.ctx.Done()
	var giveUp <-chan time.Time
	for {
		select {
		case res := <-r.done:
			return res.out, res.err
		case <-late.C:
			return r.abandon(r.timeout(true, errDeadline))
		case <-r.overrun:
			d := r.deadline.Load()
			if d == 0 {
				continue // the export ended in time
			}
			now := r.since()
			if d+int64(grace) > now {
				r.armWatchdog(d + int64(grace))
				continue
			}
			wall := d == r.wallAt
			if used, ok := r.cpuUsed(); ok && !wall {
				// Judged in CPU time (compute.go): a guest that was
				// descheduled rather than stuck has time left.
				if left := int64(r.limits.ComputeTime+grace) - used; left > 0 {
					r.armWatchdog(now + left)
					continue
				}
			}
			return r.abandon(r.timeout(wall, errDeadline))
		case <-stopping:
			stopping, giveUp = nil, time.After(grace)
		case <-giveUp:
			return r.abandon(r.cancelled())
		}
	}
}

// cancelled says why the run's context ended, if it did: the caller
// cancelled (KindAbort with its cause) or the Runtime closed.
func (r *run) cancelled() *RunError {
	if r.ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(r.ctx)
	if errors.Is(cause, ErrClosed) {
		return closedError()
	}
	return abortError(cause)
}

// abandon ends the run without waiting for the guest.
func (r *run) abandon(e *RunError) (Outcome, error) {
	e.Cause = errors.Join(e.Cause, ErrAbandoned)
	r.mu.Lock()
	r.abandoned = true
	if r.prog.Session != nil {
		r.abandonSession(e)
	}
	logs := append([]string(nil), r.output.lines...)
	calls := r.calls
	r.mu.Unlock()
	r.inbox.close()
	compute := r.compute.Load()
	if start := r.inExport.Load(); start != 0 {
		compute += r.since() - start
	}
	e.Logs = logs
	return Outcome{Stats: Stats{Compute: time.Duration(compute), Wall: time.Since(r.began), Calls: calls,
		Memory: r.memory.Load()}}, e
}

// Execute runs the program on a runner until it settles, unless it hands
// the run over to another goroutine on the way (run.idle).
func (r *run) Execute() {
	if status, e, started := r.launch(); started {
		r.drive(status, e)
	}
}

// launch starts the program (or resumes it): its first export's status, or
// why it failed. It reports false when the run ended before (finished).
func (r *run) launch() (int32, *RunError, bool) {
	if e := r.flush(); e != nil {
		r.finish(0, e)
		return 0, nil, false
	}
	if r.resuming != nil {
		return abi.StatusPending, r.resumeInstance(), true
	}
	if e := r.instantiate(); e != nil {
		r.finish(0, e)
		return 0, nil, false
	}
	status, e := r.startProgram()
	r.askNext = r.prog.Suspend != nil
	return status, e, true
}

// pendingRun is a run started on its caller's goroutine and left pending
// by its first export (run.run), for a runner to drive on.
type pendingRun struct {
	r      *run
	status int32
}

func (p pendingRun) Execute() { p.r.drive(p.status, nil) }

// drive feeds the guest until it settles and reports the outcome, unless
// the run is handed over to another goroutine on the way.
func (r *run) drive(status int32, e *RunError) {
	if e == nil {
		var passed bool
		if status, e, passed = r.loop(status); passed {
			return
		}
	}
	r.finish(status, e)
}

// finish reports the run's outcome and discards its instance (or has the
// pool reuse it: pool_recycle.go), on the one goroutine that drove the
// guest to its end.
func (r *run) finish(status int32, e *RunError) {
	defer r.rt.done()
	r.parking.end()
	var out Outcome
	var err error
	if e != nil {
		err = e
	} else {
		out, err = r.settled(status)
	}
	held := idleSuspension(out)
	if held != nil {
		r.holdInbox(held) // its calls in flight answer the run that resumes (suspend_idle.go)
	} else {
		r.inbox.close()
	}
	if r.handTimer != nil {
		r.handTimer.Stop()
	}
	if r.idleEnd != nil {
		r.idleEnd()
	}
	out.Stats = Stats{Compute: time.Duration(r.compute.Load()), Wall: time.Since(r.began), Calls: r.calls,
		Memory: r.memory.Load()}
	if e, ok := err.(*RunError); ok && e.Logs == nil {
		e.Logs = r.output.lines
	}
	if r.prog.Session != nil {
		r.endSession(err) // the session keeps the instance, or it is closed
	} else {
		if r.inst != nil && !r.recycle(status, e) {
			r.inst.close(r.ctx)
		}
		// Its memory is released: so is its admission, before Run returns
		// (an idle suspension's snapshot is charged instead).
		if held != nil {
			r.rt.holdSnapshot(r.committed, held.hold.charge)
		} else {
			r.rt.admission.Release(r.committed)
		}
	}
	r.giveSlot()
	r.done <- runResult{out, err}
}

// settled turns the final status into the Outcome or the RunError.
func (r *run) settled(status int32) (Outcome, error) {
	switch status {
	case statusSuspended:
		if r.suspension == nil {
			break // a guest's own status, never the host's
		}
		return Outcome{Suspended: r.suspension}, nil
	case abi.StatusDone:
		if r.guestErr != nil {
			break
		}
		return Outcome{Logs: r.output.lines, Result: r.result}, nil
	case abi.StatusError:
		if r.guestErr == nil {
			break
		}
		e := *r.guestErr
		e.Logs = r.output.lines
		return Outcome{}, &e
	}
	return Outcome{}, &RunError{Kind: api.KindTrap, Message: "the guest broke the host ABI",
		Cause: fmt.Errorf("wasmhost: final status %d with error %v", status, r.guestErr)}
}

// releaseAfter is how long a run waits, from its first wait, before what
// the engine holds for its releasable exports is dropped (engine.Releaser:
// wazero's call engines, 60 KiB and more of native stacks for a run parked
// on a call). Bound again at their next call (a session's next program, a
// recycled instance's next run), they cost that run about a tenth of a
// millisecond of CPU, mostly the garbage collector's: a run that waits
// less keeps them, so that a run with a fast call does not pay it, and one
// that waits longer has waited several times more than that.
const releaseAfter = 2 * time.Millisecond

// parking releases a waiting run's releasable exports (releaseAfter),
// from a timer, while the run's goroutine waits in the loop: only then is
// no export of the instance running or about to run. The loop calls park
// before each wait and unpark after it (and on taking a run over); finish
// calls end. The mutex orders the timer's release before the next export.
type parking struct {
	mu       sync.Mutex
	waiting  bool      // the run's goroutine waits: the instance is the timer's to release
	inst     *instance // the run's, set by park
	fired    bool      // the timer fired while the run did not wait: park arms it again
	released bool
	ended    bool
	timer    *time.Timer // made by the first park; used by the run's goroutine
}

// park says the run's goroutine is about to wait, on the run's goroutine.
func (r *run) park() {
	p := &r.parking
	p.mu.Lock()
	p.waiting, p.inst = true, r.inst
	rearm := p.fired && !p.released
	p.fired = false
	p.mu.Unlock()
	switch {
	case p.timer == nil:
		p.timer = time.AfterFunc(releaseAfter, p.release)
	case rearm:
		p.timer.Reset(releaseAfter)
	}
}

// unpark says the run's goroutine waits no more: it may call exports.
func (r *run) unpark() {
	p := &r.parking
	p.mu.Lock()
	p.waiting = false
	p.mu.Unlock()
}

// release is the timer's: it releases the exports if the run waits, or
// leaves it to the next park to arm it again.
func (p *parking) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.ended || p.released || p.inst == nil:
	case p.waiting:
		p.released = true
		inst := p.inst
		for _, f := range [...]engine.Func{inst.restored, inst.compile, inst.load, inst.start, inst.buffer} {
			if rel, ok := f.(engine.Releaser); ok {
				rel.Release()
			}
		}
	default:
		p.fired = true
	}
}

// end stops the timer, on the goroutine that finishes the run: from then
// on it releases nothing.
func (p *parking) end() {
	p.mu.Lock()
	p.ended, p.waiting, p.inst = true, false, nil
	p.mu.Unlock()
	if p.timer != nil {
		p.timer.Stop()
	}
}
