package executor

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// Parking: a run_code execution whose program comes to wait only on calls
// of tools that answer later (a client-side tool, a human approval) is
// suspended to bytes (wasmhost, Program.Suspend): its instance and
// goroutines are released, and the execution stays open, neither finished
// nor notified, as a *Parked value. When the answers arrive, Resume
// continues the program where it was. The parked calls then go through
// every phase as nested calls of the same execution (its parent token
// stays live while it is parked), and the answers given stand for their
// bodies; the execution's one result and notification come when the
// program ends. The token dies then, or when the parked execution is
// discarded: never does it outlive its execution.

// Answer is what a parked call's body returns, given when the execution
// resumes; for a call parked for an approval (ParkedApproval), the
// decision instead.
type Answer struct {
	Output api.Output
	Err    error
	// Decision answers a call of Kind ParkedApproval, and only such a
	// call (Output and Err are then ignored): Resume refuses a decision
	// for a tool's call, and an answer without one for an approval.
	Decision *ApprovalDecision
}

// ParkedCall is a call a parked program waits on.
type ParkedCall struct {
	ID   int32 // the key of Parked.Resume's answers
	Tool string
	Args json.RawMessage // as the tool gets them: handles' values in place of their markers
	// Kind is ParkedTool or ParkedApproval (park_approval.go).
	Kind ParkedKind
	// Reason is an approval's question (the reasons the call asks, as
	// the approver would have been asked them), and Label the data-flow
	// label the call carried; both empty for a tool's call.
	Reason string
	Label  api.Label
}

// Parked is a parked run_code execution. Resume it, or Discard it, once.
// It is safe to hand to another goroutine, not to use from two at once.
type Parked struct {
	run   *codeRun
	later func(tool string) bool
	snap  *wasmhost.Suspended
	// approvals are the calls held for an approval, by id; nil for none.
	approvals map[int32]parkedApproval
	nonce     string // this parked state's, among the execution's (parkbytes.go)
	used      atomic.Bool
	// exposed says Bytes handed the snapshot out: it is then never
	// recycled (given to the code runtime for another run's snapshot).
	exposed bool
}

// Bytes is the program's snapshot (wasmhost.Suspended.Snapshot): what is
// held in memory while the execution is parked. It is for measuring; to
// move the execution to another executor (another process, another
// node), Marshal it whole and RestoreParked it there (parkbytes.go): the
// snapshot alone has no parent token.
//
// A Parked whose bytes were never handed out gives them to the code
// runtime when it resumes, is discarded or is released
// (wasmhost.Resumption.Recycle, wasmhost.Runtime.RecycleSnapshot): a later
// suspension, of this execution or another, writes its snapshot into them
// instead of a new buffer of its whole heap (and Bytes is nil from then
// on). Once Bytes is called they are the caller's for good: never
// recycled, never written.
func (p *Parked) Bytes() []byte {
	p.exposed = true
	return p.snap.Snapshot
}

// recycler is a code runtime that takes snapshot buffers back.
type recycler interface {
	RecycleSnapshot(s *wasmhost.Suspended)
}

// recycle gives the snapshot's bytes to the code runtime, unless they were
// handed out (Bytes).
func (p *Parked) recycle() {
	if rt, ok := p.run.x.e.cfg.runtime.(recycler); ok && !p.exposed {
		rt.RecycleSnapshot(p.snap)
	}
}

// Calls are the calls the program waits on, by id, with their arguments as
// their tools get them (the values of the handles the program passed:
// flowpark.go).
func (p *Parked) Calls() []ParkedCall {
	calls := make([]ParkedCall, len(p.snap.Calls))
	for i, c := range p.snap.Calls {
		calls[i] = ParkedCall{ID: c.ID, Tool: c.Name, Args: p.run.tok.callerArgs(c.Args), Kind: ParkedTool}
		if a, ok := p.approvals[c.ID]; ok {
			calls[i].Kind, calls[i].Reason, calls[i].Label = ParkedApproval, a.Reason, a.Label
		}
	}
	return calls
}

// CallID is the ID the parked call id (ParkedCall.ID) has as a nested
// call of the execution when it resumes (Request.ID, Start.ID,
// Notification.Request.ID): "" for an id the program does not wait on.
func (p *Parked) CallID(id int32) string {
	next := p.run.tok.seq.Load()
	for _, c := range p.snap.Calls {
		next++
		if c.ID == id {
			return p.run.tok.callID + ":ptc:" + strconv.FormatInt(next, 10)
		}
	}
	return ""
}

// ExecuteParkable runs a model-direct call as Execute does, except that a
// run_code program that comes to wait only on calls of tools for which
// later returns true, and on calls held for an approval (ParkApprovals,
// park_approval.go), is parked: the call returns no result (a zero
// api.Result) and the parked execution. Any other call, and a program that
// never waits that way, returns its result and nil. later may be nil: no
// tool answers later.
//
// Parking needs a code runtime that can resume (a *wasmhost.Runtime with
// its image, the default).
func (e *Executor) ExecuteParkable(ctx context.Context, call Call, later func(tool string) bool) (api.Result, *Parked) {
	if later == nil {
		later = func(string) bool { return false }
	}
	pk := &parking{later: later, wait: liveWaitOf(ctx), ctx: ctx}
	pctx := context.WithValue(ctx, parkingKey{}, pk)
	x := e.newExecution(call, nil)
	if x.prepare(pctx) {
		if _, ok := e.cfg.runtime.(resumer); !ok && x.def != nil && x.def.Transport() {
			x.fail(internal("run_code cannot be parked: its code runtime cannot resume runs (use a *wasmhost.Runtime)", nil))
			return x.finish(pctx), nil
		}
		x.dispatch(pctx)
		parkedAnswers.drop(pk.registered) // live waits' answers no call took (livewait.go)
		if pk.parked != nil {
			x.err, x.out = nil, api.Output{}
			return api.Result{}, pk.parked
		}
		x.postExecute(pctx)
	}
	return x.finish(pctx), nil
}

// Resume continues the parked execution with the answers of (some of) its
// calls, by ParkedCall.ID: each such call goes through every phase as a
// nested call, with its answer for its body (for a call parked for an
// approval, its Answer.Decision for phase 5); a call left unanswered is
// dispatched to its tool as any nested call (an approval is then asked
// again). It returns the execution's
// result, or, when the program waits again only on calls that answer
// later, no result and the execution parked again. A Parked resumes once:
// again, it is refused with INTERNAL.
//
// One exception: when the sandbox has no room for the run (BUSY,
// wasmhost.ErrBusy: the program did not run), Resume returns that error
// and p itself, still parked as it was, neither finished nor notified:
// resume it again later (with the same answers), or Discard or Release
// it. Check for it with again == p.
func (p *Parked) Resume(ctx context.Context, answers map[int32]Answer) (api.Result, *Parked) {
	c := p.run
	x := c.x
	if !p.used.CompareAndSwap(false, true) {
		return api.Result{ID: x.req.ID, Tool: x.req.Tool, Err: internal("this parked execution was already resumed or discarded", nil)}, nil
	}
	rt, _ := x.e.cfg.runtime.(resumer)
	known := make(map[int32]bool, len(p.snap.Calls))
	for _, pc := range p.snap.Calls {
		known[pc.ID] = true
	}
	for id, a := range answers {
		why := ""
		_, approval := p.approvals[id]
		switch {
		case !known[id]:
			why = ", which the parked program does not wait on"
		case approval && a.Decision == nil:
			why = " without a decision, and it waits for an approval (Answer.Decision)"
		case !approval && a.Decision != nil:
			why = " with an approval decision, and it is a tool's call"
		}
		if why != "" {
			takenParked.resumed(p.stateKey())
			x.fail(internal("Resume answers call "+strconv.Itoa(int(id))+why, nil))
			c.tok.kill()
			return x.finish(ctx), nil
		}
	}
	pk := &parking{later: p.later, wait: liveWaitOf(ctx), ctx: ctx}
	pctx := context.WithValue(ctx, parkingKey{}, pk)
	c.park = pk
	c.start = time.Now().Add(-c.elapsed)
	var registered []string
	out, err := x.e.runProgram(pctx, c, func(prog wasmhost.Program, s *scheduler) (wasmhost.Outcome, error) {
		// The calls the snapshot holds are dispatched first, in the order
		// of their ids, before the program runs anything: the nth gets the
		// nth call number of the token from here.
		next := c.tok.seq.Load()
		for _, pc := range p.snap.Calls {
			next++
			if a, ok := answers[pc.ID]; ok {
				id := c.tok.callID + ":ptc:" + strconv.FormatInt(next, 10)
				parkedAnswers.put(id, c.tok, a)
				registered = append(registered, id)
			}
		}
		// The snapshot's bytes are the Parked's own (the run's, or a copy
		// RestoreParked made), and it resumes once: unless they were handed
		// out (Bytes), they go to the code runtime as the run starts, for
		// its next snapshot or another run's.
		rs := wasmhost.Resumption{Limits: prog.Limits, Deadline: prog.Deadline, Suspend: prog.Suspend, SuspendIdle: prog.SuspendIdle,
			Recheck: prog.Recheck, Tenant: prog.Tenant}
		if !p.exposed {
			rs.Recycle = p.snap
		}
		return rt.Resume(pctx, p.snap.Snapshot, s, rs)
	})
	parkedAnswers.drop(registered)
	parkedAnswers.drop(pk.registered) // live waits' answers no call took (livewait.go)
	if errors.Is(err, wasmhost.ErrBusy) {
		// Nothing ran: the execution stays parked as it was, with a live
		// token of its own (the run's died with the run).
		c.tok = c.tok.successor()
		p.used.Store(false)
		var ae *api.Error
		errors.As(err, &ae)
		return api.Result{ID: x.req.ID, Tool: x.req.Tool, Err: ae}, p
	}
	takenParked.resumed(p.stateKey())
	x.conclude(pctx, pctx, outcome{out: out, err: err})
	if pk.parked != nil {
		x.err, x.out = nil, api.Output{}
		return api.Result{}, pk.parked
	}
	x.postExecute(pctx)
	return x.finish(pctx), nil
}

// Discard ends a parked execution that will not resume: its token dies,
// and it finishes as CODE_RUN_FAILED (abort), with its one notification.
func (p *Parked) Discard(ctx context.Context) api.Result {
	c := p.run
	if !p.used.CompareAndSwap(false, true) {
		return api.Result{ID: c.x.req.ID, Tool: c.x.req.Tool, Err: internal("this parked execution was already resumed or discarded", nil)}
	}
	takenParked.release(p.stateKey())
	p.recycle()
	c.tok.kill()
	c.x.fail(&api.Error{Code: api.CodeCodeRunFailed, Kind: api.KindAbort, Message: "the parked run was discarded before it resumed"})
	return c.x.finish(ctx)
}

// Release gives the parked execution up without finishing it, for a host
// that keeps its bytes (Marshal) to resume it elsewhere, or stops: its
// token dies, no notification is emitted, and this process may restore
// the bytes again (RestoreParked). It reports false, doing nothing, for a
// Parked already resumed, discarded or released.
func (p *Parked) Release() bool {
	if !p.used.CompareAndSwap(false, true) {
		return false
	}
	takenParked.release(p.stateKey())
	p.recycle()
	p.run.tok.kill()
	return true
}

// ExecutionID is the ID of the run_code execution p is, which its
// result and its nested calls' IDs carry.
func (p *Parked) ExecutionID() string { return p.run.x.req.ID }

// successor is a fresh live token for the execution t was minted for,
// with t's call counter and ledger: a parked execution whose resumed run
// never started (BUSY) goes on with it.
func (t *token) successor() *token {
	n := t.exec.mintToken(t.callID, t.scope)
	n.seq.Store(t.seq.Load())
	n.plan = t.plan
	t.ledger.mu.Lock()
	n.ledger.calls, n.ledger.args, n.ledger.total, n.ledger.omitted, n.ledger.cost = t.ledger.calls, t.ledger.args, t.ledger.total, t.ledger.omitted, t.ledger.cost
	t.ledger.mu.Unlock()
	n.flow.inherit(&t.flow)
	return n
}

// resumer is a code runtime that can resume a suspended run.
type resumer interface {
	Resume(ctx context.Context, snapshot []byte, d wasmhost.Dispatcher, rs wasmhost.Resumption) (wasmhost.Outcome, error)
}

type parkingKey struct{}

// parking is what ExecuteParkable passes run_code through its context.
type parking struct {
	later  func(tool string) bool
	parked *Parked
	// wait, when set, is asked before the program parks (livewait.go), with
	// ctx, the run's; registered are the call IDs of the answers it gave.
	wait       LiveWait
	ctx        context.Context
	registered []string
	// recheck is the run's wasmhost.Program.Recheck, set while a run that
	// may park runs (runProgram); nil otherwise (a session's program).
	recheck chan struct{}
	mu      sync.Mutex
	asks    []*asking // its nested calls held for an approval (park_approval.go)
}

func parkingOf(ctx context.Context) *parking {
	p, _ := ctx.Value(parkingKey{}).(*parking)
	return p
}

// errParked is run_code's body's return when it parked: ExecuteParkable
// and Resume take the execution back before it finishes.
var errParked = errors.New("executor: the run was parked")

// suspendWhen is the run's Program.Suspend: nil unless it may park; then
// true at an idle point (an idle park, idlepark.go), and at a quiescent
// point after an export when its caller may park it (ExecuteParkable) and
// every call the program waits on without an answer is held (not yet
// dispatched) and answers later. So a run parked for its caller never has
// a call in flight, which its bytes could not carry (Marshal).
func (c *codeRun) suspendWhen() func(wasmhost.Quiescence) bool {
	if c.park == nil && c.idleGrace() == 0 {
		return nil
	}
	var later func(string) bool
	pk := c.park
	if pk != nil {
		later = pk.later
	}
	return func(q wasmhost.Quiescence) bool {
		if q.Idle {
			return true
		}
		if later == nil {
			return false
		}
		waiting := 0
		var chk parkCheck // refusedBeforeParking's (flowpark.go)
		var dispatched []pendingLike
		for _, pc := range q.Calls {
			switch {
			case pc.State == wasmhost.CallAnswered:
				continue
			case pc.State == wasmhost.CallDispatched:
				// Parkable only if held for an approval (park_approval.go).
				dispatched = append(dispatched, pendingLike{id: pc.ID, name: pc.Name, args: pc.Args})
			case !later(pc.Name):
				return false
			default: // held for its caller: not if its plan or its rules would refuse or ask first
				if c.refusedBeforeParking(pc.Name, pc.Args, &chk) {
					return false
				}
			}
			waiting++
		}
		if len(dispatched) > 0 {
			// A person decides an approval: no live wait for it.
			if _, ok := c.park.approvalsOf(dispatched); !ok {
				return false
			}
		} else if waiting > 0 && pk.wait != nil && c.waitLive(pk, q) {
			return false // answered live: the held calls are dispatched with their answers
		}
		return waiting > 0
	}
}

// parked records the parked execution; the token stays live. The calls
// held for an approval are the parked ones that were dispatched.
func (c *codeRun) parked(out wasmhost.Outcome) (api.Output, error) {
	c.elapsed = out.Stats.Wall
	p := &Parked{run: c, later: c.park.later, snap: out.Suspended, nonce: newParkedNonce(c.x.req.ID)}
	var dispatched []pendingLike
	for _, pc := range out.Suspended.Calls {
		if pc.State == wasmhost.CallDispatched {
			dispatched = append(dispatched, pendingLike{id: pc.ID, name: pc.Name, args: pc.Args})
		}
	}
	if m, _ := c.park.approvalsOf(dispatched); len(m) > 0 { // suspendWhen matched them all
		p.approvals = make(map[int32]parkedApproval, len(m))
		for id, a := range m {
			p.approvals[id] = parkedApproval{Reason: a.question, Label: a.label}
		}
	}
	c.park.mu.Lock()
	c.park.asks = nil // parked with the program: dispatched again on resume
	c.park.mu.Unlock()
	c.park.parked = p
	return api.Output{}, errParked
}

// parkedAnswers are the answers of resumed parked calls, by call ID, until
// their bodies take them. n spares every other body the lock.
var parkedAnswers answerTable

type answerTable struct {
	n  atomic.Int64
	mu sync.Mutex
	m  map[string]parkedAnswer
}

type parkedAnswer struct {
	tok *token
	a   Answer
}

func (t *answerTable) put(id string, tok *token, a Answer) {
	t.mu.Lock()
	if t.m == nil {
		t.m = make(map[string]parkedAnswer)
	}
	t.m[id] = parkedAnswer{tok: tok, a: a}
	t.n.Store(int64(len(t.m)))
	t.mu.Unlock()
}

func (t *answerTable) drop(ids []string) {
	if len(ids) == 0 {
		return
	}
	t.mu.Lock()
	for _, id := range ids {
		delete(t.m, id)
	}
	t.n.Store(int64(len(t.m)))
	t.mu.Unlock()
}

// takeParkedAnswer returns the answer given for x's body, if x is a
// resumed parked call of its token.
func takeParkedAnswer(x *execution) (Answer, bool) {
	t := &parkedAnswers
	if t.n.Load() == 0 || !x.req.Nested {
		return Answer{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	pa, ok := t.m[x.req.ID]
	if !ok || pa.tok != x.parent || pa.a.Decision != nil { // a decision is phase 5's (takeParkedDecision)

		return Answer{}, false
	}
	delete(t.m, x.req.ID)
	t.n.Store(int64(len(t.m)))
	return pa.a, true
}
