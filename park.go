package ptcx

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// Parking: a run_code program that comes to wait only on calls a person
// decides (WithParkedApprovals) or that answer later (WithParkedTools) is
// suspended to bytes by Host.ExecuteParkable, holding no instance and no
// goroutine, and handed back as a Parked. Resume continues it where it
// stopped, with the answers: the program is not replayed, so what it did
// before it parked is not done again (executor.ExecuteParkable, in
// docs/architecture.md's phase 5).

// parkedElsewhere ends the DENIED message of a call that asks where it
// cannot wait (WithParkedApprovals).
const parkedElsewhere = "only a run_code program run with Host.ExecuteParkable can wait for a decision: " +
	"run it there, and decide with Parked.Resume"

// WithParkedApprovals makes the host's approvals park instead of block: a
// nested call of a program run by Host.ExecuteParkable that asks (a tool
// declared with NeedsApproval, a data-flow rule whose OnViolation is ask,
// a pre-execute listener's Ask) is held, and the program parks on it once
// it waits on nothing else (a ParkedCall of kind ParkedApproval); the
// decision comes with Parked.Resume. Anywhere else (Host.Execute, a call
// made directly, a program in a session) no one can wait for a person, so
// such a call is DENIED, naming ExecuteParkable as the route that can. It
// replaces the approver of WithExecutor (executor.ParkApprovals).
func WithParkedApprovals() Option {
	return func(o *options) { o.parkApprovals = true }
}

// WithParkedTools names tools whose calls answer later: a program run by
// Host.ExecuteParkable that comes to wait only on calls of them (and on
// approvals, with WithParkedApprovals) parks, and Parked.Resume gives
// their answers (Answer.Output or Answer.Err) without running their
// bodies. The tools are registered as any other (WithTools,
// Host.Register), and their bodies run where a call cannot wait: a call
// not answered at Resume, every call outside ExecuteParkable, and a call
// made together with a call of a tool that runs here (Promise.all with
// one): a call that started cannot be carried in bytes, so a program
// parks only when everything it waits on can wait. Several
// WithParkedTools add up; a name that is not a valid tool name, or is
// run_code, fails New.
func WithParkedTools(names ...string) Option {
	names = slices.Clone(names)
	return func(o *options) {
		for _, n := range names {
			if !registry.ValidName(n) || n == registry.RunCode {
				o.fail(fmt.Errorf("ptcx: WithParkedTools: %q is not a tool name a program can call", n))
				return
			}
		}
		o.parkedTools = append(slices.Clip(o.parkedTools), names...)
	}
}

// ParkedKind says what a parked call waits for: ParkedApproval or
// ParkedTool.
type ParkedKind = executor.ParkedKind

// The kinds of parked calls.
const (
	// ParkedApproval: a call held for a person's decision
	// (WithParkedApprovals); answer it with Approve or Decline.
	ParkedApproval = executor.ParkedApproval
	// ParkedTool: a call of a tool that answers later (WithParkedTools);
	// answer it with its Output or Err.
	ParkedTool = executor.ParkedTool
)

// ParkedCall is a call a parked program waits on.
type ParkedCall struct {
	// ID is the call's id as a nested call of the execution (Result.ID of
	// its result, "<execution>:ptc:<n>"): the key of its answer in
	// Parked.Resume. It is the same after Marshal and RestoreParked.
	ID   string
	Kind ParkedKind
	Tool string
	Args json.RawMessage
	// Reason is an approval's question: every reason the call asks, as an
	// approver would have been asked it. Empty for a tool's call.
	Reason string
	// Labels is the data-flow label the call carried (docs/security.md,
	// "Data flow"), for an approval. The zero Label for a tool's call.
	Labels Label
}

// Answer answers one parked call: a Decision for a call of kind
// ParkedApproval (Approve, Decline), the tool's Output or Err for one of
// kind ParkedTool.
type Answer = executor.Answer

// Decision decides a call parked for an approval: approved, the call goes
// on to its guards and its tool's body; declined, it is DENIED with
// Reason, which the program's promise rejects with.
type Decision = executor.ApprovalDecision

// Approve is the answer that approves a parked approval. (A Decision's
// Reason matters only when it declines: nothing reads an approval's.)
func Approve() Answer {
	return Answer{Decision: &Decision{Approve: true}}
}

// Decline is the answer that declines a parked approval: the call is
// DENIED with reason.
func Decline(reason string) Answer {
	return Answer{Decision: &Decision{Reason: reason}}
}

// Parked is a run_code execution parked by Host.ExecuteParkable (or
// restored by Host.RestoreParked): neither finished nor notified, holding
// no instance and no goroutine. Resume it, Discard it, or Marshal and
// Release it to continue elsewhere, once. It is safe to hand to another
// goroutine. Resume, Discard and Release may race: one wins, the others
// are refused, so a parked execution never continues twice; Calls and
// Marshal must not run while one of them does.
type Parked struct {
	h    *Host
	p    *executor.Parked
	used atomic.Bool
}

// ExecuteParkable executes c as Execute does, except that a run_code
// program that comes to wait only on approvals (WithParkedApprovals) and
// calls of tools that answer later (WithParkedTools) is parked: it
// returns no result (the zero Result) and the Parked. Any other call, and
// a program that never waits that way, returns its result and nil. With
// neither option nothing parks: it is Execute. Parking needs ptc or both mode (run_code)
// and a sandbox that can resume runs (New's own, or a *wasmhost.Runtime);
// a program in a session never parks.
func (h *Host) ExecuteParkable(ctx context.Context, c Call) (Result, *Parked) {
	call, refused := h.executorCall(c)
	if refused != nil {
		return *refused, nil
	}
	r, p := h.exec.ExecuteParkable(ctx, call, h.later)
	if p == nil {
		return r, nil
	}
	return Result{}, &Parked{h: h, p: p}
}

// later reports whether calls of tool answer later (WithParkedTools).
func (h *Host) later(tool string) bool {
	_, ok := h.parkedTools[tool]
	return ok
}

// RestoreParked rebuilds a parked execution from Parked.Marshal's bytes,
// made by this host or another (another process, another node) with the
// same tools in the same scopes; then Resume or Discard it as the one
// ExecuteParkable returned. It is refused, before anything runs, with an
// error matching executor.ErrParkedFormat (not a parked execution this
// version reads), executor.ErrParkedIncompatible (its scope, mode or tools
// differ here) or executor.ErrParkedTaken (these bytes are held by a
// Parked of this process, or were resumed in it already: Release the
// first one to move it). Across processes, that a parked state completes
// once is the host's to see to (serve's store does it by revision).
func (h *Host) RestoreParked(data []byte) (*Parked, error) {
	if h.closed.Load() {
		return nil, ErrClosed
	}
	p, err := h.exec.RestoreParked(data)
	if err != nil {
		return nil, fmt.Errorf("ptcx: RestoreParked: %w", err)
	}
	return &Parked{h: h, p: p}, nil
}

// ExecutionID is the id of the parked run_code execution: its call's ID,
// which its result carries.
func (p *Parked) ExecutionID() string {
	if p.none() {
		return ""
	}
	return p.p.ExecutionID()
}

// none reports whether p is nil (ExecuteParkable returned a result, not a
// Parked) or a zero Parked, which every method refuses rather than panic.
func (p *Parked) none() bool { return p == nil || p.p == nil }

// take marks p used, reporting false for a Parked already used (resumed,
// discarded, released) or none.
func (p *Parked) take() bool { return !p.none() && p.used.CompareAndSwap(false, true) }

// spent is why p cannot be used.
const spent = "this parked execution was already resumed, discarded or released (or is none: a nil or zero Parked)"

// Calls are the calls the program waits on, in the order of their ids.
func (p *Parked) Calls() []ParkedCall {
	if p.none() {
		return nil
	}
	calls := p.p.Calls()
	out := make([]ParkedCall, len(calls))
	for i, c := range calls {
		out[i] = ParkedCall{ID: p.p.CallID(c.ID), Kind: c.Kind, Tool: c.Tool, Args: c.Args, Reason: c.Reason, Labels: c.Label}
	}
	return out
}

// Resume continues the program with answers, by ParkedCall.ID: each
// answered call goes through the pipeline again as a nested call (its
// data-flow rules are checked as things are then) with its answer
// standing for the approval or the tool's body. A call left unanswered is
// dispatched as any nested call: a tool's body runs, an approval is asked
// again (and the program parks on it again). It returns the execution's
// result, or, when the program parks again, no result and the new Parked.
//
// Answers that do not fit (an id the program does not wait on, a
// Decision for a tool's call, an answer without one for an approval) are
// refused with INVALID_ARGS before anything runs, and p is returned as it
// was, still parked: resume it again with the right answers. So is a
// sandbox with no room for the run (BUSY), and a closed host (INTERNAL,
// matching ErrClosed: Marshal and Release p, and restore it on another
// host). Check for them with next == p. A Parked already resumed,
// discarded or released is refused with INTERNAL, and nil.
func (p *Parked) Resume(ctx context.Context, answers map[string]Answer) (r Result, next *Parked) {
	if !p.take() {
		return p.failed(api.CodeInternal, spent), nil
	}
	if p.h.closed.Load() {
		p.used.Store(false)
		r = p.failed(api.CodeInternal, ErrClosed.Error())
		r.Err.Cause = ErrClosed
		return r, p
	}
	byID, err := p.answers(answers)
	if err != nil {
		p.used.Store(false)
		return p.failed(api.CodeInvalidArgs, err.Error()), p
	}
	r, again := p.p.Resume(ctx, byID)
	switch again {
	case nil:
		return r, nil
	case p.p: // BUSY: nothing ran
		p.used.Store(false)
		if r.Err != nil {
			r.Text = r.Err.Message
		}
		return r, p
	}
	return Result{}, &Parked{h: p.h, p: again}
}

// answers maps answers by ParkedCall.ID to the executor's ids, checking
// that each fits the call it answers.
func (p *Parked) answers(answers map[string]Answer) (map[int32]executor.Answer, error) {
	calls := p.p.Calls()
	waits := make(map[string]executor.ParkedCall, len(calls))
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = p.p.CallID(c.ID)
		waits[ids[i]] = c
	}
	byID := make(map[int32]executor.Answer, len(answers))
	for _, id := range slices.Sorted(maps.Keys(answers)) { // the first bad one, the same every time
		a := answers[id]
		c, ok := waits[id]
		switch {
		case !ok:
			return nil, fmt.Errorf("execution %s does not wait on a call %q: the ids are its Parked.Calls' (%s)", p.ExecutionID(), id, strings.Join(ids, ", "))
		case c.Kind == ParkedApproval && a.Decision == nil:
			return nil, fmt.Errorf("call %s (%s) waits for an approval: answer it with a Decision (ptcx.Approve, ptcx.Decline), not a tool's output", id, c.Tool)
		case c.Kind != ParkedApproval && a.Decision != nil:
			return nil, fmt.Errorf("call %s (%s) is a tool's call: answer it with its Output or Err, not a Decision", id, c.Tool)
		}
		byID[c.ID] = a
	}
	return byID, nil
}

// failed is a result of the execution with an error and no value.
func (p *Parked) failed(code Code, msg string) Result {
	err := &Error{Code: code, Message: msg}
	return Result{ID: p.ExecutionID(), Tool: registry.RunCode, Text: msg, Err: err}
}

// Marshal writes the parked execution as bytes Host.RestoreParked reads,
// in this process or another (executor.Parked.Marshal: the program, its
// limits, the calls it waits on with their reasons and labels, the
// sandbox's compressed snapshot). p stays parked: Release it once the
// bytes are kept, or Resume or Discard it here instead.
func (p *Parked) Marshal() ([]byte, error) {
	if p.none() || p.used.Load() {
		return nil, fmt.Errorf("ptcx: Marshal: %s: there is nothing left to marshal", spent)
	}
	return p.p.Marshal()
}

// Release gives p up without finishing it, once its bytes are kept
// (Marshal) to continue elsewhere: no result, no notification, and this
// process may restore the bytes (Host.RestoreParked). It reports false,
// doing nothing, for a Parked already resumed, discarded or released.
func (p *Parked) Release() bool {
	if !p.take() {
		return false
	}
	return p.p.Release()
}

// Discard ends a parked execution that will not resume: it finishes as
// CODE_RUN_FAILED (kind abort), with its one notification, and that is
// its result. A Parked already resumed, discarded or released is refused
// with INTERNAL.
func (p *Parked) Discard(ctx context.Context) Result {
	if !p.take() {
		return p.failed(api.CodeInternal, spent)
	}
	return p.p.Discard(ctx)
}
