package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
	"github.com/ptcx/ptcx/wasmhost/internal/wasifs"
)

// Resumption says how a suspended run goes on.
type Resumption struct {
	// Results answer pending calls, by PendingCall.ID: those calls are not
	// dispatched again, and the program gets these outcomes (after the
	// answers the snapshot carries, in the order of their ids). An id the
	// run does not wait on, or one the snapshot already answers, is
	// refused (ErrSnapshot).
	Results map[int32]CallResult
	// Limits lower the run's (those it was suspended with, lowered to this
	// Runtime's), never raise them; zero fields keep them.
	Limits api.Limits
	// Deadline is as Program.Deadline.
	Deadline time.Time
	// Suspend is as Program.Suspend: the resumed run may be suspended again.
	Suspend func(Quiescence) bool
	// SuspendIdle is as Program.SuspendIdle.
	SuspendIdle time.Duration
	// Recheck is as Program.Recheck.
	Recheck <-chan struct{}
	// Tenant is as Program.Tenant: the resumed run's fairness key.
	Tenant string
	// Waited is time to count as having passed while the run was
	// suspended: its timers are due that much sooner, and its wall time
	// (Stats.Wall, the wall limit) counts it, as if it had waited live;
	// its compute time does not. A host resuming in this process an idle
	// suspension it held gives time.Since(Suspended.At), so that a program
	// sleeping 40 s wakes 40 s after it went to sleep, however long it was
	// suspended. Zero: the time suspended counts toward nothing (as for a
	// program parked on a client). Negative is refused.
	Waited time.Duration
	// Attach, when set, is the Suspended this snapshot came from, an idle
	// suspension (Suspended.Idle) whose dispatched calls still run in this
	// process: the answers that came since it was suspended are given to
	// the program (after those the snapshot carries, in the order they
	// came), and calls still running answer the resumed run when they
	// finish; none is dispatched again, and Results may not answer one.
	// The resumed run is admitted with its snapshot's charge counted as
	// committed already (suspend_idle.go), waiting for the rest at most
	// the admission wait from this call. A Suspended is attached once:
	// one released (Release, End, RecycleSnapshot) or taken over already
	// is refused. When Resume fails before the run is admitted (ErrBusy,
	// a refusal, ErrClosed, a cancellation while it waited), nothing was
	// taken: the Suspended holds its calls and its charge as before. Without Attach, a snapshot's dispatched calls are
	// dispatched again (and an idle Suspended given as Recycle drops its
	// calls in flight as the run starts).
	Attach *Suspended
	// SnapshotBuffer, when its capacity holds the snapshot, is where the
	// resumed run writes it if it is suspended again (Suspended.Snapshot
	// is then SnapshotBuffer[:n]), instead of a new buffer: a buffer that
	// was written already costs a copy, a new one of megabytes as much
	// again in zeroing, page faults and collections; one whose capacity
	// turns out too small for the snapshot may be written into before the
	// snapshot is made in a new buffer. It may be the
	// snapshot being resumed, which the run no longer reads once it runs
	// (the snapshot, then, is overwritten). It is the caller's to give:
	// nothing else may use it until Resume returns, nor, once it returns a
	// suspended run, but as that run's snapshot.
	SnapshotBuffer []byte
	// Recycle, when set, is the Suspended whose snapshot is being resumed
	// (its Snapshot is Resume's snapshot), given to the Runtime once the
	// run starts: the run reads the snapshot while it restores its
	// instance, then gives its buffer to the Runtime's free list
	// (RecycleSnapshot), where the run's next snapshot, should it suspend
	// again, or another run's, is written. Recycle.Snapshot is nil once
	// the run started, so that the snapshot cannot be resumed or read
	// again through it; the caller must not read the snapshot through any
	// other slice either. When Resume fails before the run starts
	// (ErrBusy, ErrSnapshot, ErrClosed, invalid limits), nothing was given:
	// Recycle is as it was, the caller's still; but a snapshot whose
	// memory fails its check is refused (ErrSnapshot) once the run
	// started, its buffer given.
	Recycle *Suspended
}

// Resume continues a run that Program.Suspend suspended, in a fresh
// instance of this Runtime, where the snapshot left it: the calls it waits
// on and did not answer are dispatched to d (unless rs.Results answers
// them, or rs.Attach keeps them running), its timers are re-armed with
// what was left of their delays, and its compute time, calls, wall time
// and output so far count as they did. The time it spent suspended counts
// toward nothing, unless rs.Waited says how much of it to count. Its
// Outcome is as Run's, its logs those of the whole run.
//
// The snapshot must come from a Runtime of the same guest (ABI version,
// module and initialised image): a Python run's resumes on rt's Python
// Runtime, as it ran (python.go); any other, or corrupt bytes, is refused
// with ErrSnapshot (errors.Is), saying why, before anything runs: the
// memory's check of a snapshot of format 4 is compared as its blocks are
// written into the instance's memory, which is then discarded (so that,
// with Resumption.Recycle, its buffer was given already). It may be
// resumed more than once: each Resume is a run of its own.
func (rt *Runtime) Resume(ctx context.Context, snap []byte, d Dispatcher, rs Resumption) (Outcome, error) {
	if rt.closed.Load() {
		return Outcome{}, ErrClosed
	}
	if d == nil {
		return Outcome{}, errors.New("wasmhost: nil Dispatcher")
	}
	if rt.image == nil {
		return Outcome{}, errNoImage
	}
	if g, err := rt.guestOf(ctx, snap); err != nil {
		return Outcome{}, err
	} else if g != rt {
		return g.Resume(ctx, snap, d, rs) // a Python run's snapshot (python.go)
	}
	if err := rs.Limits.Validate(); err != nil {
		return Outcome{}, fmt.Errorf("wasmhost: invalid resumption limits: %w", err)
	}
	if rs.Recycle != nil && !sameBuffer(rs.Recycle.Snapshot, snap) {
		return Outcome{}, errors.New("wasmhost: Resumption.Recycle is not the Suspended of the snapshot being resumed")
	}
	if rs.Waited < 0 {
		return Outcome{}, fmt.Errorf("wasmhost: Resumption.Waited of %v is negative", rs.Waited)
	}
	var taking *idleHold // the idle suspension this resume takes over
	switch {
	case rs.Attach != nil:
		if err := errAttach(rs.Attach, snap); err != nil {
			return Outcome{}, err
		}
		if rs.Recycle != nil && rs.Recycle != rs.Attach {
			return Outcome{}, errors.New("wasmhost: Resumption.Attach and Resumption.Recycle are two different Suspended values")
		}
		taking = rs.Attach.hold
	case rs.Recycle != nil && rs.Recycle.hold != nil && !rs.Recycle.hold.over.Load():
		taking = rs.Recycle.hold
	}
	st, err := snapshot.Decode(rt.image.base(), rt.limits.MemoryBytes, snap)
	if err != nil {
		return Outcome{}, err
	}
	m := &st.Meta
	limits := rs.Limits.Within(m.Limits.Within(rt.limits))
	if rt.lang == api.LanguagePython {
		if err := rt.lang.CheckMemory(limits.MemoryBytes); err != nil { // its floor, as for a run (pythonFor)
			return Outcome{}, fmt.Errorf("wasmhost: %w", err)
		}
	}
	if int64(st.Pages)*abi.PageSize > limits.MemoryBytes {
		return Outcome{}, snapshot.Refuse("its memory of %d bytes is over the resumed run's memory limit of %d bytes",
			int64(st.Pages)*abi.PageSize, limits.MemoryBytes)
	}
	p := Program{Tools: m.Tools, Limits: limits, Deadline: rs.Deadline, Suspend: rs.Suspend, SuspendIdle: rs.SuspendIdle, Recheck: rs.Recheck,
		Tenant: rs.Tenant}
	if m.World.Deterministic {
		p.World = &World{Seed: m.World.Seed, Start: time.Unix(0, m.World.Epoch)}
	}
	r, err := newRun(rt, p, d)
	if err != nil {
		return Outcome{}, err
	}
	r.snapshotBuf = rs.SnapshotBuffer
	r.taking, r.attached = taking, rs.Attach != nil
	if err := r.adopt(st, rs.Results); err != nil {
		return Outcome{}, err
	}
	r.startAt(time.Duration(m.Wall) + rs.Waited)
	r.timers.Restore(m.Timers, r.began)
	if err := rt.admit(ctx, r); err != nil {
		return Outcome{Stats: Stats{Wall: time.Since(r.began)}}, err
	}
	if taking != nil {
		// Admitted: the suspension is the run's now (its charge is part
		// of r.committed).
		taking.over.Store(true)
		switch {
		case taking.inbox == nil:
		case r.attached:
			r.inbox = taking.inbox
			r.inbox.attach()
		default:
			taking.inbox.close() // its calls are dispatched again
		}
	}
	if !rt.acquire() {
		rt.admission.Release(r.committed)
		r.inbox.close()
		return Outcome{}, ErrClosed
	}
	if s := rs.Recycle; s != nil {
		// The run starts: the snapshot is the Runtime's now, given back
		// once the instance is restored (resumeInstance).
		st.Recycle = s.buffer()
		s.Snapshot, s.buf = nil, nil
	}
	out, err := r.run(ctx)
	if re := (*RunError)(nil); errors.As(err, &re) && errors.Is(re.Cause, ErrSnapshot) {
		// Refused as its blocks were written (their check, format 4):
		// nothing ran, and the caller sees what a snapshot refused
		// before the run started shows.
		return Outcome{}, re.Cause
	}
	return out, err
}

// errNoImage means suspending or resuming was asked of a Runtime without
// an image.
var errNoImage = errors.New("wasmhost: suspending and resuming runs need the Runtime's initialised image " +
	"(Config.WithImage(true), the default, and a guest that exports ptcx_restored)")

// adopt takes the run's table from a snapshot: its counters, output and
// calls (answers first, in their order, then results, by id; the calls
// left are dispatched when the run starts, but for those still in flight
// in an attached suspension, which answer the run's inbox).
func (r *run) adopt(st *snapshot.State, results map[int32]CallResult) error {
	m := &st.Meta
	r.resuming = st
	r.compute.Store(m.Compute)
	r.calls, r.refusedCalls, r.lastID = m.Calls, m.RefusedCalls, m.LastID
	r.output.used, r.output.lines = m.OutputUsed, m.Logs
	r.pending = len(m.Pending)
	answers := make([]completion, 0, len(m.Pending))
	waiting := make(map[int32]bool, len(m.Pending))
	for _, c := range m.Pending {
		r.argBytes += c.Size
		if c.Answered {
			answers = append(answers, completion{id: c.ID, args: c.Size,
				res: CallResult{OK: c.OK, Value: c.Value, Message: c.Message, Code: c.Code, Handle: c.Handle}})
			continue
		}
		waiting[c.ID] = true
		if r.waiting == nil {
			r.waiting = make(map[int32]*waitingCall)
		}
		r.waiting[c.ID] = &waitingCall{name: c.Name, args: c.Args, size: c.Size, dispatched: r.attached && c.Dispatched}
	}
	ids := make([]int32, 0, len(results))
	for id := range results {
		if !waiting[id] {
			return snapshot.Refuse("Resumption.Results answers call %d, which the run does not wait on unanswered", id)
		}
		if r.waiting[id].dispatched {
			return fmt.Errorf("wasmhost: Resumption.Results answers call %d, which still runs in this process (Resumption.Attach): it answers the run itself", id)
		}
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		answers = append(answers, completion{id: id, args: r.waiting[id].size, res: results[id]})
	}
	for _, c := range m.Pending {
		if _, given := results[c.ID]; !c.Answered && !given && !r.waiting[c.ID].dispatched {
			r.resumeHeld = append(r.resumeHeld, c.ID)
		}
	}
	r.resumeAnswers = answers
	return nil
}

// startAt sets the run's clock going as start does, elapsed into the run.
func (r *run) startAt(elapsed time.Duration) {
	r.start()
	r.began = r.began.Add(-elapsed)
	r.wallDeadline = r.began.Add(r.limits.WallTime)
	if d := r.prog.Deadline; !d.IsZero() && d.Before(r.wallDeadline) {
		r.wallDeadline = d
	}
	r.wallAt = max(int64(r.wallDeadline.Sub(r.began)), 0) + 1
}

// resumeInstance restores the run's instance from its snapshot: an
// instance restored from the image (into a resume spare whose pages are
// backed when one covers the snapshot, pool_resume.go, else from the
// pool when one is ready),
// grown to the snapshot's size, the snapshot's blocks written over it, its
// globals, exchange buffer and world set; no ptcx_restored, since the
// program's own performance and Math.random are in its memory. Then the
// answers go to the inbox and the calls left are dispatched.
func (r *run) resumeInstance() *RunError {
	if b := r.resuming.Recycle; b != nil {
		// Once read (or not to be), the snapshot's buffer goes to the
		// free list (Resumption.Recycle).
		defer r.rt.keepSnapshotBuffer(b)
	}
	if e := r.begin(false); e != nil {
		return e
	}
	inst, err := r.restoreSnapshot()
	r.end()
	if err != nil {
		if e := r.failure(); e != nil {
			return e
		}
		return &RunError{Kind: api.KindTrap, Message: "the snapshot could not be restored", Cause: err}
	}
	r.inst = inst
	r.memory.Store(int64(inst.mem.Size()))
	// In front of what an attached suspension's calls answered since.
	r.inbox.unshift(r.resumeAnswers)
	r.held, r.resumeAnswers, r.resumeHeld, r.resuming = r.resumeHeld, nil, nil, nil
	return r.releaseHeld()
}

func (r *run) restoreSnapshot() (*instance, error) {
	rt, st := r.rt, r.resuming
	limit := uint64(abi.MemoryPages(r.limits.MemoryBytes)) * abi.PageSize
	size := int(st.Pages) * abi.PageSize
	var inst *instance
	backed, fromSpare := resumeSpare{}, false
	if size > len(rt.image.memory) {
		// Pages already backed, when a resume spare covers the snapshot.
		backed, fromSpare = rt.takeResumeSpare(size, limit)
	}
	var err error
	switch {
	case fromSpare && backed.inst != nil: // readied ahead (readyResumeSpares)
		inst = backed.inst
	case fromSpare:
		if inst, err = rt.restoreInto(r.ctx, limit, backed); err != nil {
			return nil, err
		}
	default:
		if inst = rt.pool.take(r.prog.Tenant); inst == nil {
			if inst, err = rt.restore(r.ctx, limit); err != nil {
				return nil, err
			}
		}
	}
	if inst.memory.mapped != nil {
		inst.memory.resumed = rt
	}
	inst.limitMemory(limit)
	fail := func(err error) (*instance, error) {
		inst.close(r.ctx)
		return nil, err
	}
	if have := inst.mem.Size() / abi.PageSize; st.Pages > have {
		if _, ok := inst.mem.Grow(st.Pages - have); !ok {
			return fail(fmt.Errorf("wasmhost: grow the memory to the snapshot's %d pages", st.Pages))
		}
	}
	if m := inst.memory; fromSpare {
		resetForSnapshot(m.mapped, backed.used, rt.image.memory, st.Blocks, size, m.cow, &inst.scratch)
	} else if err := populateSnapshot(m, rt.image.memory, st.Blocks); err != nil {
		return fail(err)
	}
	if err := snapshot.WriteBlocks(st, inst.mem.Write); err != nil {
		// Partly written, or refused by its check once written: the
		// memory is released when the instance closes, never kept as a
		// spare of either kind.
		inst.memory.discardOnClose()
		return fail(err)
	}
	m := &st.Meta
	for _, g := range m.Globals {
		mg := inst.mod.Global(g.Name)
		if mg == nil || !mg.Set(g.Value) {
			return fail(fmt.Errorf("wasmhost: the guest's global %q is missing or not mutable", g.Name))
		}
	}
	inst.bufPtr, inst.bufCap = m.BufPtr, m.BufCap
	if err := inst.world.Restore(m.World); err != nil {
		return fail(err)
	}
	if err := restoreFiles(inst.mod, m.Files); err != nil {
		return fail(err)
	}
	return inst, nil
}

// restoreFiles opens the files a snapshot's guest had open in mod's file
// table, refusing the snapshot (ErrSnapshot) when one cannot be: it names
// a descriptor out of range or twice, a file the guest's file system does
// not have, an offset past its end, or the engine's instances have no
// table (a QuickJS guest's snapshot has no files, a Python guest's on
// wazero its table).
func restoreFiles(mod engine.Instance, files []wasifs.File) error {
	ft, ok := mod.(engine.FileTable)
	if !ok {
		if len(files) == 0 {
			return nil
		}
		return snapshot.Refuse("it has %d open files and the engine's instances have no file table", len(files))
	}
	if err := ft.RestoreFiles(files); err != nil {
		return snapshot.Refuse("its open files: %v", err)
	}
	return nil
}

// discardOnClose has the memory released when its instance closes, not
// kept as a resume spare nor as the pool's: what a refused snapshot wrote
// into it is left to no reset.
func (m *cappedMemory) discardOnClose() {
	m.resumed, m.image = nil, nil
}
