package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"sync"

	wapi "github.com/tetratelabs/wazero/api"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost/internal/abi"
)

// Sessions: consecutive runs that share one program state, as a REPL does
// (docs/abi.md, "Sessions"). A Session holds that state between runs: a
// live instance (its memory charged to admission, as a pooled instance's
// is), or the instance suspended to bytes (session_bytes.go), or nothing
// yet. A run with Program.Session takes the state, runs its program in the
// same JavaScript context (the top-level declarations of the programs
// before it in scope, globalThis as they left it), or for Python in the
// same __main__ (its globals as they were left), and gives the state back
// when it ends, unless the host stopped it. A session's programs are of
// one language (Session.Language): a Python session's state is held by
// the Runtime's Python Runtime (python.go).

// errSessionNoImage means a run in a Session was asked of a Runtime
// without an image.
var errSessionNoImage = errors.New("wasmhost: sessions need the Runtime's initialised image " +
	"(Config.WithImage(true), the default, and a guest that exports ptcx_restored)")

// exportNext is the guest's export that readies a session's instance for
// its next program (ptcx_next, docs/abi.md).
const exportNext = "ptcx_next"

// SessionState says where a Session's program state is.
type SessionState int

const (
	// SessionEmpty sessions have no state: the next run starts afresh.
	SessionEmpty SessionState = iota
	// SessionLive sessions hold a live instance, ready for the next run.
	SessionLive
	// SessionSuspended sessions hold their state as bytes: the next run
	// restores it (Session.Suspend).
	SessionSuspended
	// SessionRunning sessions are running a program.
	SessionRunning
)

func (s SessionState) String() string {
	switch s {
	case SessionEmpty:
		return "empty"
	case SessionLive:
		return "live"
	case SessionSuspended:
		return "suspended"
	case SessionRunning:
		return "running"
	}
	return fmt.Sprintf("SessionState(%d)", int(s))
}

// Session is the program state that the runs naming it share (see
// Program.Session). It is safe for concurrent use, but runs one program at
// a time: a run that finds it running another fails with KindAbort
// (ErrSessionBusy). It belongs to the Runtime that made it, and never
// crosses scopes by itself: the host decides which runs name it (the
// executor keys sessions by scope and name).
//
// A run keeps the state it leaves when its program returned or failed on
// its own (KindException, KindSyntax, KindInvalidOutput: a REPL keeps what
// ran before the throw). A run the host stopped (a timeout, memory, the
// output limit, a cancellation, a trap) may have left the heap half
// updated: the state is dropped, the RunError says so (SessionReset), and
// the next run starts afresh.
type Session struct {
	// rt is the Runtime whose instances hold the state: the Runtime that
	// made the session, or that Runtime's Python Runtime once a Python
	// program ran in it (bind). Set under mu, once.
	rt *Runtime

	// lang is the language of the session's programs: that of its first
	// program, or of the guest that made its imported bytes; "" until
	// then. A session's programs are all of one language (bind).
	lang api.Language

	mu      sync.Mutex
	busy    bool
	closed  bool
	inst    *instance // live between runs, or nil
	charged int64     // what inst is charged to admission (Runtime.chargePool), or 0
	saved   []byte    // the state suspended to bytes, or nil
	notice  string    // why the state was dropped between runs, until Notice reads it
	// tenant is the tenant (Program.Tenant) of the runs that used the
	// state's instance since it was made; mixed says runs of another
	// tenant used it too, so it is never recycled (let).
	tenant string
	mixed  bool
}

// NewSession returns an empty Session of rt, or ErrClosed. Sessions need
// the Runtime's image (Config.WithImage, the default): a run in a session
// on a Runtime without one fails at once. Making one does no work (ctx is
// for runtimes that start lazily, which the executor also accepts).
func (rt *Runtime) NewSession(context.Context) (*Session, error) {
	if rt.closed.Load() {
		return nil, ErrClosed
	}
	return &Session{rt: rt}, nil
}

// Language returns the language of the session's programs: that of the
// first program that ran in it, or of the guest that made the bytes it was
// imported from (ImportSession); "" while it has had neither. It stays
// when the state is reset: a session's programs are all of one language,
// and a run of another fails before it starts.
func (s *Session) Language() api.Language {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lang
}

// bind readies s for a program of lang run by lrt, the Runtime of that
// language (python.go): the session's first program fixes its language,
// and its state's Runtime with it. A program of another language, or on
// a Runtime that did not make the session (nor is its Python Runtime), is
// refused.
func (s *Session) bind(lrt *Runtime, lang api.Language) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rt.root() != lrt.root() {
		return errors.New("wasmhost: the Session is another Runtime's")
	}
	switch s.lang {
	case "":
		s.lang, s.rt = lang, lrt
	case lang:
	default:
		return fmt.Errorf("wasmhost: a %s program cannot run in a session of %s programs: a session's programs are all of one language",
			lang.Title(), s.lang.Title())
	}
	return nil
}

// State says where the session's state is now.
func (s *Session) State() SessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.busy:
		return SessionRunning
	case s.inst != nil:
		return SessionLive
	case s.saved != nil:
		return SessionSuspended
	}
	return SessionEmpty
}

// Bytes returns the size of the session's state: its suspended bytes, or
// the live instance's memory, or 0.
func (s *Session) Bytes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inst != nil {
		return int(s.inst.mem.Size())
	}
	return len(s.saved)
}

// Suspend captures a live session's state into bytes and discards its
// instance, giving its memory back to admission; the next run restores
// the state from the bytes. It returns the bytes' size (that of the state
// already suspended, if it was). It fails with ErrSessionBusy while a
// program runs; a state that cannot be captured is dropped, and the error
// says why.
func (s *Session) Suspend(ctx context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy {
		return 0, ErrSessionBusy
	}
	if s.inst == nil {
		return len(s.saved), nil
	}
	// Counted as a guest that runs, so that a Close meanwhile releases
	// the instances' memory only once the capture is done.
	if !s.rt.acquire() {
		s.resetLocked(ctx)
		return 0, ErrClosed
	}
	defer s.rt.done()
	inst := s.inst
	s.dropLive()
	b, err := s.rt.captureSession(inst)
	s.let(ctx, inst)
	if err != nil {
		return 0, fmt.Errorf("wasmhost: the session's state could not be suspended, so it was dropped: %w", err)
	}
	s.saved = b
	return len(b), nil
}

// Reset drops the session's state: the next run starts afresh. A program
// running meanwhile is not stopped; the state it leaves is kept.
func (s *Session) Reset(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetLocked(ctx)
}

// Close drops the session's state; later runs in it fail with KindAbort
// (ErrSessionClosed). A program running meanwhile finishes, and its state
// is then discarded.
func (s *Session) Close(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.resetLocked(ctx)
}

// Notice returns, once, why the session's state was dropped between two
// runs when it was dropped by the Runtime rather than by a run's failure
// (its RunError says SessionReset) or the host: it did not fit beside the
// admitted runs in memory and could not be suspended. It is "" otherwise.
func (s *Session) Notice() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.notice
	s.notice = ""
	return n
}

// resetLocked drops the state. Under s.mu.
func (s *Session) resetLocked(ctx context.Context) {
	if inst := s.inst; inst != nil {
		s.dropLive()
		s.let(ctx, inst)
	}
	s.saved = nil
}

// let lets go of the session's idle instance, whose state the session no
// longer needs (it was closed, reset, or suspended to bytes): reset to the
// image, it joins the warm pool for its tenant's next run, as a settled
// run's instance does (Runtime.recycle), unless runs of several tenants
// used it; otherwise, or when it cannot be recycled, it is closed. A
// closing session's instance is then the next run's hot instance, not a
// new one whose every page faults in: runs beside sessions pay nothing for
// them. Under s.mu.
//
// The reset writes the instance's memory, which the Runtime's Close frees
// (releaseAll) unless a guest is counted as executing: so the reset is
// counted as one (acquire, done), and once the Runtime is closed the
// instance is closed instead.
func (s *Session) let(ctx context.Context, inst *instance) {
	if !s.mixed && s.rt.acquire() {
		recycled := s.rt.recycle(inst, s.tenant)
		s.rt.done() // releases the engine here when Close came meanwhile
		if recycled {
			return
		}
	}
	inst.close(ctx)
}

// usedBy notes that a run of tenant took the session's instance; fresh
// says the instance is new to the session (made or restored from bytes
// for this run). Under the run's turn (busy).
func (s *Session) usedBy(tenant string, fresh bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fresh {
		s.tenant, s.mixed = tenant, false
	} else if tenant != s.tenant {
		s.mixed = true
	}
}

// dropLive forgets the live instance and its charge. Under s.mu.
func (s *Session) dropLive() {
	if s.charged > 0 {
		s.rt.unchargePool(s.charged)
		s.rt.sessions.remove(s)
	}
	s.inst, s.charged = nil, 0
}

// take gives a run the session's state: its live instance or its bytes
// (at most one of them; neither for an empty session).
func (s *Session) take() (*instance, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, nil, ErrSessionClosed
	case s.busy:
		return nil, nil, ErrSessionBusy
	}
	s.busy = true
	inst, saved := s.inst, s.saved
	if inst != nil {
		s.dropLive()
	}
	s.inst, s.saved = nil, nil
	return inst, saved, nil
}

// give ends a run in the session: inst is the state it leaves, or nil when
// the state is gone. A live instance is charged to admission for its
// memory, as a pooled one is; when that does not fit, it is suspended to
// bytes at once.
func (s *Session) give(ctx context.Context, inst *instance) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = false
	if inst == nil {
		return
	}
	if s.closed {
		s.let(ctx, inst) // closed while this run ran
		return
	}
	if s.rt.closed.Load() {
		inst.close(ctx)
		return
	}
	size := int64(inst.mem.Size())
	if s.rt.chargePool(size) {
		s.inst, s.charged = inst, size
		s.rt.sessions.add(s)
		return
	}
	b, err := s.rt.captureSession(inst)
	inst.close(ctx)
	if err != nil {
		s.notice = "the session's state was dropped: it did not fit beside the sandbox's other runs in memory and could not be suspended (" +
			err.Error() + ")"
		return
	}
	s.saved = b
}

// keepsSession says whether a run that ended with err leaves a state its
// session keeps: it settled, or its program failed on its own.
func keepsSession(err error) bool {
	if err == nil {
		return true
	}
	var re *RunError
	if !errors.As(err, &re) {
		return false
	}
	switch re.Kind {
	case api.KindException, api.KindSyntax, api.KindInvalidOutput:
		return true
	}
	return false
}

// sessionInstance gives the run its session's instance: the live one, or
// one restored from the session's bytes, or, for an empty session, a new
// one as any run gets. An instance that ran a program before is readied
// for this one by ptcx_next, in this run's world.
func (r *run) sessionInstance() *RunError {
	s := r.prog.Session
	inst, saved, err := s.take()
	if err != nil {
		return &RunError{Kind: api.KindAbort, Message: "the session cannot run this program: " + err.Error(), Cause: err}
	}
	r.mu.Lock()
	r.sessionHeld = true
	r.mu.Unlock()
	if e := r.begin(false); e != nil {
		if inst != nil {
			inst.close(r.ctx)
		}
		return e
	}
	defer r.end()
	limit := uint64(abi.MemoryPages(r.limits.MemoryBytes)) * abi.PageSize
	switch {
	case inst == nil && saved == nil:
		// Reserved for the Runtime's limit, so that a later run of the
		// session may have a higher one than this run.
		inst, err = r.rt.newInstance(r.ctx, r.rt.limits.MemoryBytes, r.rt.worldFor(r), r.prog.Tenant)
		if err != nil {
			return r.sessionLost(fmt.Errorf("wasmhost: a new instance for the session: %w", err), api.KindTrap)
		}
		inst.limitMemory(limit)
		s.usedBy(r.prog.Tenant, true)
		r.inst = inst
		r.memory.Store(int64(inst.mem.Size()))
		return nil
	case inst == nil:
		if inst, err = r.rt.resumeSession(r.ctx, saved); err != nil {
			return r.sessionLost(err, api.KindTrap)
		}
		s.usedBy(r.prog.Tenant, true)
	default:
		s.usedBy(r.prog.Tenant, false)
	}
	if size := inst.mem.Size(); uint64(size) > limit {
		inst.close(r.ctx)
		return r.sessionLost(fmt.Errorf("the session's memory of %d bytes is over this program's memory limit of %d bytes",
			size, r.limits.MemoryBytes), api.KindMemory)
	}
	inst.setMemoryLimit(limit)
	inst.world.Set(r.rt.worldFor(r))
	next := inst.next // bound once per instance: a binding's stack grows with its first calls, and is kept
	if next == nil {
		inst.close(r.ctx)
		return r.sessionLost(abi.ErrStaleGuest, api.KindTrap)
	}
	st := &inst.stack
	if err := next.CallWithStack(r.ctx, st[:]); err != nil {
		inst.close(r.ctx)
		return r.sessionLost(fmt.Errorf("wasmhost: %s failed: %w", exportNext, err), api.KindTrap)
	}
	if status := wapi.DecodeI32(st[0]); status != abi.StatusDone {
		inst.close(r.ctx)
		return r.sessionLost(fmt.Errorf("wasmhost: %s returned status %d, not done (%d)", exportNext, status, abi.StatusDone), api.KindTrap)
	}
	r.inst = inst
	r.memory.Store(int64(inst.mem.Size()))
	return nil
}

// sessionLost is the failure of a run whose session's state could not be
// taken up: the state is gone (the run ends the session's turn empty).
func (r *run) sessionLost(cause error, kind api.Kind) *RunError {
	if e := r.failure(); e != nil {
		return e
	}
	return &RunError{Kind: kind, Cause: cause, Message: "the session's state could not be continued: " + cause.Error()}
}

// endSession ends a run in a session, on the goroutine that drove it (in
// place of closing its instance): the session keeps the instance when the
// run's outcome allows (keepsSession) and it was not abandoned, and the
// run's admission is released either way. A session the run did not get
// (it was busy or closed) is left alone.
func (r *run) endSession(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	held, inst := r.sessionHeld && !r.abandoned, r.inst
	keep := held && inst != nil && keepsSession(err)
	if !keep && inst != nil {
		inst.close(r.ctx)
	}
	r.rt.admission.Release(r.committed)
	if !held {
		return
	}
	if !keep {
		markReset(err)
		inst = nil
	}
	r.prog.Session.give(r.ctx, inst)
}

// abandonSession ends the session's turn of a run abandoned by the
// goroutine that waited for it: its state is gone (the guest may still be
// running in it). Under r.mu, after abandoned was set.
func (r *run) abandonSession(e *RunError) {
	if !r.sessionHeld {
		return
	}
	e.SessionReset = true
	r.prog.Session.give(r.ctx, nil)
}

// markReset says in err, a run's failure, that its session's state is
// gone.
func markReset(err error) {
	var re *RunError
	if errors.As(err, &re) {
		re.SessionReset = true
	}
}
