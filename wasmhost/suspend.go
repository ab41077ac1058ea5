package wasmhost

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
)

// Suspending a run. Between exports the guest is quiescent (docs/abi.md):
// its whole state is its linear memory and its mutable globals, and the
// host's is the run's table of calls and timers, its counters and its
// output. A run whose Program.Suspend says so at such a point is captured
// into a snapshot (snapshot.go) and ends; Runtime.Resume
// (suspend_resume.go) continues it in a fresh instance, in this process or
// another.

// CallState is where a nested call the program waits on stands.
type CallState int

const (
	// CallHeld calls were made and not yet dispatched: a suspension
	// dispatches them when the run resumes.
	CallHeld CallState = iota + 1
	// CallDispatched calls were given to the Dispatcher and have not
	// answered. A suspension forgets the Dispatcher: such a call is
	// dispatched again when the run resumes, unless Resumption.Results
	// answers it, or the resume attaches to the suspension that keeps it
	// running (Resumption.Attach).
	CallDispatched
	// CallAnswered calls have answered and the program has not yet seen
	// the answer: a snapshot carries the answer.
	CallAnswered
)

func (s CallState) String() string {
	switch s {
	case CallHeld:
		return "held"
	case CallDispatched:
		return "dispatched"
	case CallAnswered:
		return "answered"
	}
	return fmt.Sprintf("CallState(%d)", int(s))
}

// PendingCall is one nested call the program waits on.
type PendingCall struct {
	// ID is the call's id in the run (1, 2, 3, ... in the order of the
	// calls): Resumption.Results is keyed by it.
	ID int32
	// Name is the tool's name, Args its JSON arguments (the caller's
	// copy). Both are empty for a call refused for the size of its
	// arguments, which is answered with the refusal at once.
	Name  string
	Args  json.RawMessage
	State CallState
}

// Quiescence is what Program.Suspend is shown at a quiescent point.
type Quiescence struct {
	// Calls are the nested calls the program waits on, by id.
	Calls []PendingCall
	// Timers is how many timers are pending.
	Timers int
	// Idle is set when the run is asked after waiting
	// Program.SuspendIdle with nothing to feed the guest; it is not set at
	// the quiescent points after exports. Every call the program made is
	// dispatched by then (none is held). A suspension there is an idle
	// one (Suspended.Idle).
	Idle bool
	// Yield gives the run's guest slot to other guests. A Suspend that
	// waits before it answers (a host waiting a short while for a call's
	// answer, to spare a suspension) calls it first, so that no other run
	// waits on it meanwhile; the run takes a slot again before its guest
	// next runs. Calling it more than once is harmless.
	Yield func()
}

// Suspended is a suspended run: Outcome.Suspended.
type Suspended struct {
	// Snapshot is what Runtime.Resume continues the run from: versioned,
	// self-describing and checksummed (snapshot.go), its body stored as
	// is, so that suspending costs a copy; CompressSnapshot makes it
	// several times smaller for a host that keeps it on disk or sends it
	// away. It is the host's to keep: it holds the program's whole state,
	// arguments and logs.
	Snapshot []byte
	// RawBytes is the size of the snapshot's body, uncompressed.
	RawBytes int
	// Calls are the calls the program waits on that the snapshot does not
	// answer (held or dispatched): dispatched when the run resumes, unless
	// Resumption.Results answers them (or, for the dispatched calls of an
	// idle suspension, Resumption.Attach keeps them).
	Calls []PendingCall
	// At is when the run was suspended: a resume in this process that
	// counts the time since as waited gives Resumption.Waited
	// time.Since(At).
	At time.Time
	// WakeAt is when the earliest of the run's timers is due, in real
	// time, for a resume that counts the suspended time as waited
	// (Resumption.Waited of time.Since(At)); zero when no timer is
	// pending. A host that resumes the run no later than WakeAt runs the
	// timer on time.
	WakeAt time.Time
	// Idle is set for a suspension at an idle point (Quiescence.Idle):
	// its calls still in flight run on in this process and answer into
	// it (Answered), and its snapshot is charged to the Runtime's
	// committed memory until it is resumed (Resumption.Attach or
	// Resumption.Recycle), ended (End), recycled (RecycleSnapshot) or
	// released (Release): suspend_idle.go.
	Idle bool

	// buf is the buffer Snapshot was written into, its whole capacity:
	// what RecycleSnapshot and Resumption.Recycle give back.
	buf []byte
	// hold is what an idle suspension holds in this process; nil for
	// others.
	hold *idleHold
	// What End reports of the run as it was suspended.
	limits api.Limits
	stats  Stats
	logs   []string
}

// waitingCall is a call the run keeps while Program.Suspend is set: what a
// snapshot needs to dispatch it again.
type waitingCall struct {
	name       string
	args       []byte // the run's own copy: the Dispatcher has another
	size       int    // its share of run.argBytes
	dispatched bool
}

// hold keeps a call the guest made instead of dispatching it (hostCall,
// while Program.Suspend is set): releaseHeld dispatches it at the points an
// IdleDispatcher's held calls are started.
func (r *run) hold(id int32, name string, args []byte) {
	if r.waiting == nil {
		r.waiting = make(map[int32]*waitingCall)
	}
	r.waiting[id] = &waitingCall{name: name, args: args, size: len(args)}
	r.held = append(r.held, id)
}

// releaseHeld dispatches the calls the run holds, in the order they were
// made. A Dispatcher that panics ends the run.
func (r *run) releaseHeld() (e *RunError) {
	if len(r.held) == 0 {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			e = &RunError{Kind: api.KindTrap, Message: "the host failed to dispatch a nested call",
				Cause: fmt.Errorf("wasmhost: Dispatcher panicked: %v", p)}
		}
	}()
	for len(r.held) > 0 {
		id := r.held[0]
		r.held = r.held[1:]
		w := r.waiting[id]
		if w == nil || w.dispatched {
			continue
		}
		w.dispatched = true
		r.disp.Dispatch(w.name, append(json.RawMessage(nil), w.args...), r.inbox.doneFunc(id, w.size))
	}
	r.held = nil
	return nil
}

// answered forgets a call whose answer the guest was given.
func (r *run) answered(id int32) {
	if r.waiting != nil {
		delete(r.waiting, id)
	}
}

// quiescent asks Program.Suspend whether to suspend the run here, where
// the guest just returned pending (or, idle, where it has waited
// Program.SuspendIdle: an outcome that came meanwhile is fed instead of
// asking); rest are outcomes taken from the inbox and not yet given to the
// guest. When it suspends, the snapshot is in r.suspension; when it does
// not, nothing changed.
func (r *run) quiescent(rest []completion, idle bool) (bool, *RunError) {
	extra := r.inbox.take(nil)
	if idle && len(extra) > 0 {
		r.inbox.unshift(extra)
		return false, nil
	}
	answers := append(append([]completion(nil), rest...), extra...)
	q := r.quiescence(answers)
	q.Idle, q.Yield = idle, r.giveSlot
	yes, e := r.askSuspend(q)
	if e != nil {
		return false, e
	}
	if !yes {
		r.inbox.unshift(extra)
		return false, nil
	}
	s, err := r.capture(answers, idle)
	if err != nil {
		return false, &RunError{Kind: api.KindAbort, Cause: err,
			Message: "the run could not be suspended: " + err.Error()}
	}
	r.suspension = s
	return true, nil
}

// askSuspend calls Program.Suspend; a panic in it ends the run.
func (r *run) askSuspend(q Quiescence) (yes bool, e *RunError) {
	defer func() {
		if p := recover(); p != nil {
			e = &RunError{Kind: api.KindTrap, Message: "the host failed at a quiescent point",
				Cause: fmt.Errorf("wasmhost: Program.Suspend panicked: %v", p)}
		}
	}()
	return r.prog.Suspend(q), nil
}

// quiescence lists what the program waits on: the run's waiting calls, and
// the answers not yet given to the guest.
func (r *run) quiescence(answers []completion) Quiescence {
	q := Quiescence{Timers: r.timers.Len()}
	seen := make(map[int32]bool, len(answers))
	for _, c := range answers {
		seen[c.id] = true
		pc := PendingCall{ID: c.id, State: CallAnswered}
		if w := r.waiting[c.id]; w != nil {
			pc.Name, pc.Args = w.name, append(json.RawMessage(nil), w.args...)
		}
		q.Calls = append(q.Calls, pc)
	}
	for id, w := range r.waiting {
		if seen[id] {
			continue
		}
		state := CallHeld
		if w.dispatched {
			state = CallDispatched
		}
		q.Calls = append(q.Calls, PendingCall{ID: id, Name: w.name, Args: append(json.RawMessage(nil), w.args...), State: state})
	}
	sortCalls(q.Calls)
	return q
}

func sortCalls(calls []PendingCall) {
	for i := 1; i < len(calls); i++ {
		for j := i; j > 0 && calls[j].ID < calls[j-1].ID; j-- {
			calls[j], calls[j-1] = calls[j-1], calls[j]
		}
	}
}

// capture takes the run's state at a quiescent point into a snapshot;
// idle says the point is an idle one (Quiescence.Idle).
func (r *run) capture(answers []completion, idle bool) (*Suspended, error) {
	inst := r.inst
	at := time.Now()
	st := snapshot.State{
		Meta: snapshot.Meta{
			Limits:       r.limits,
			Tools:        r.prog.Tools,
			Compute:      r.compute.Load(),
			Wall:         int64(at.Sub(r.began)),
			Calls:        r.calls,
			RefusedCalls: r.refusedCalls,
			LastID:       r.lastID,
			OutputUsed:   r.output.used,
			Logs:         r.output.lines,
			BufPtr:       inst.bufPtr,
			BufCap:       inst.bufCap,
		},
	}
	m := &st.Meta
	answeredIDs := make(map[int32]bool, len(answers))
	for _, c := range answers {
		answeredIDs[c.id] = true
		sc := snapshot.Call{ID: c.id, Size: c.args, Answered: true, OK: c.res.OK, Value: c.res.Value,
			Message: c.res.Message, Code: c.res.Code, Handle: c.res.Handle}
		if w := r.waiting[c.id]; w != nil {
			sc.Name, sc.Args = w.name, w.args
		}
		m.Pending = append(m.Pending, sc)
	}
	var unanswered []PendingCall
	for _, pc := range r.quiescence(nil).Calls {
		if answeredIDs[pc.ID] {
			continue
		}
		unanswered = append(unanswered, pc)
		m.Pending = append(m.Pending, snapshot.Call{ID: pc.ID, Name: pc.Name, Args: pc.Args, Size: len(pc.Args),
			Dispatched: pc.State == CallDispatched})
	}
	if len(m.Pending) != r.pending {
		return nil, fmt.Errorf("wasmhost: %d calls pending, %d known: a call was dispatched outside the run's table", r.pending, len(m.Pending))
	}
	m.Timers = r.timers.Snapshot(r.began)
	ws, err := inst.world.Save()
	if err != nil {
		return nil, err
	}
	m.World = ws
	for _, name := range r.rt.image.globals {
		g := inst.mod.Global(name)
		if g == nil {
			return nil, fmt.Errorf("wasmhost: the guest's global %q is missing", name)
		}
		m.Globals = append(m.Globals, snapshot.Global{Name: name, Value: g.Get()})
	}
	if ft, ok := inst.mod.(engine.FileTable); ok {
		m.Files = ft.Files()
	}
	size := inst.mem.Size()
	mem, ok := inst.mem.Read(0, size)
	if !ok {
		return nil, fmt.Errorf("wasmhost: the guest's memory of %d bytes cannot be read", size)
	}
	st.Memory = mem
	b, raw, err := snapshot.Encode(r.rt.image.base(), &st, r.snapshotBuf, r.rt.takeSnapshotBuffer, r.rt.keepSnapshotBuffer)
	if err != nil {
		return nil, err
	}
	if inst.memory.mapped != nil {
		// Its pages are backed where the snapshot's blocks go: kept as a
		// resume spare when the instance closes (pool_resume.go), its
		// resume writes them into pages already there.
		inst.memory.resumed = r.rt
	}
	// Clipped: past its length, the buffer may hold the bytes of the
	// snapshot it held before (snapshot_buffers.go).
	s := &Suspended{Snapshot: b[:len(b):len(b)], RawBytes: raw, Calls: unanswered, At: at, Idle: idle, buf: b,
		limits: r.limits, logs: r.output.lines,
		stats: Stats{Compute: time.Duration(m.Compute), Wall: time.Duration(m.Wall), Calls: r.calls, Memory: int64(size)}}
	if next, ok := r.timers.Next(); ok {
		s.WakeAt = next
	}
	if idle {
		s.hold = &idleHold{rt: r.rt, charge: int64(cap(b))}
	}
	return s, nil
}

// unshift puts outcomes taken from the inbox back in front of it.
func (b *inbox) unshift(cs []completion) {
	if len(cs) == 0 {
		return
	}
	b.mu.Lock()
	if !b.closed {
		b.queue = append(cs, b.queue...)
	}
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// statusSuspended is the host's own status, never the guest's: the run
// was suspended at a quiescent point.
const statusSuspended = -1
