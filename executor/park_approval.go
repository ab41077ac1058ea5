package executor

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/policy"
)

// Parking on an approval (ParkApprovals). A nested call of a parkable run
// (ExecuteParkable, Parked.Resume) that asks goes through phases 1 to 4
// (collapse, validation, the plan, its data-flow rules and the pre-execute
// listeners) like any call; at phase 5, instead of blocking in an
// approver, it is held: it neither commits nor answers the program, its
// data-flow charge is given back, and the run is told to ask again whether
// to suspend (wasmhost.Program.Recheck). The run parks once everything the
// program waits on is such a call or a held call of a tool that answers
// later: the parked call is a ParkedCall of Kind ParkedApproval, with the
// question and the label the call carried. On Resume its answer is an
// ApprovalDecision: the call is dispatched again as a nested call of the
// execution, its phases 1 to 4 run again (its rules are checked against
// the execution's state as it is then) and the decision stands for phase 5:
// approved, it goes on to the guards and its tool's body; declined, it is
// DENIED with the decision's reason, which the program's promise rejects
// with. The program is not replayed: it continues where it stopped.

// ParkedKind says what a parked call waits for.
type ParkedKind string

const (
	// ParkedTool: a call of a tool that answers later (ExecuteParkable's
	// later): its Answer is the tool's output or error.
	ParkedTool ParkedKind = "tool"
	// ParkedApproval: a call held for an approval (ParkApprovals): its
	// Answer is a decision (Answer.Decision).
	ParkedApproval ParkedKind = "approval"
)

// ApprovalDecision answers a call parked for approval.
type ApprovalDecision struct {
	// Approve lets the call go on to its guards and its tool's body;
	// false denies it (DENIED) with Reason.
	Approve bool
	Reason  string
}

// ParkApprovals returns an Approver that never blocks: in a run_code
// program run by ExecuteParkable (or resumed by Parked.Resume), a nested
// call it is asked about is held and the program parks on it
// (ParkedApproval), to be decided when it resumes. Anywhere else (a call
// made directly, a keep_state session's program, Execute), it denies the
// call with DENIED, saying the call cannot wait for an approval there and
// adding elsewhere (for instance, where it could). Install it with
// Config.WithApprover or WithCallApprover.
func ParkApprovals(elsewhere string) Approver { return parkApprover{elsewhere: elsewhere} }

type parkApprover struct{ elsewhere string }

// Approve is never called: approve (approval.go) recognises the type.
func (a parkApprover) Approve(context.Context, Request, string) (Approval, string, error) {
	return Reject, a.elsewhere, nil
}

// asking is a nested call held for an approval.
type asking struct {
	n        *nested
	name     string
	args     json.RawMessage // as the program made the call (wasmhost's copy)
	question string
	label    api.Label
}

// parkedApproval is what a parked approval call carries.
type parkedApproval struct {
	Reason string    `json:"reason"`
	Label  api.Label `json:"label"`
}

// holdForApproval holds x, a nested call that asks, when its run may park
// on it: it reports false (and holds nothing) otherwise.
func (x *execution) holdForApproval(ctx context.Context, question string) bool {
	pk := parkingOf(ctx)
	if pk == nil || !x.req.Nested || pk.recheck == nil {
		return false
	}
	label := x.ctxLabel
	if x.flowAsk != nil && x.flowAsk.Label != nil {
		label = label.Join(*x.flowAsk.Label)
	}
	x.askParked = &asking{name: x.req.Tool, args: x.req.Args, question: question, label: label}
	if p := x.def.Policy(); p != nil {
		x.parent.flow.uncharge(x.req.Tool, p) // charged again as it is dispatched on resume
	}
	return true
}

// uncharge gives back what charge counted for one call of tool.
func (f *flow) uncharge(tool string, p *policy.Compiled) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.CallsPerRun() > 0 && f.counts[tool] > 0 {
		f.counts[tool]--
	}
	f.cost = max(f.cost-p.Cost(), 0)
}

// held records n, whose call was held for an approval (its prepare
// stopped at phase 5 with x.askParked), with its run's parking: it is
// neither committed nor answered, and the run is told to ask whether to
// suspend. Its place among the calls in flight is given back.
func (s *scheduler) held(n *nested, pk *parking) {
	a := n.x.askParked
	a.n = n
	pk.mu.Lock()
	pk.asks = append(pk.asks, a)
	pk.mu.Unlock()
	s.mu.Lock()
	if s.inflight--; s.inflight <= 1 {
		s.drained.Signal()
	}
	s.mu.Unlock()
	s.commits.Done()
	select {
	case pk.recheck <- struct{}{}:
	default:
	}
}

// approvalsOf matches calls a quiescent run waits on that were dispatched
// against the calls held for an approval, by tool and arguments (two
// calls alike are alike to the program too): it returns the match of each
// by id, and false when one of them is not held.
func (pk *parking) approvalsOf(calls []pendingLike) (map[int32]*asking, bool) {
	pk.mu.Lock()
	defer pk.mu.Unlock()
	used := make([]bool, len(pk.asks))
	var out map[int32]*asking
	for _, c := range calls {
		if len(c.args) == 0 {
			c.args = []byte("{}") // as a call's Request has it (initExecution)
		}
		found := false
		for i, a := range pk.asks {
			if !used[i] && a.name == c.name && bytes.Equal(a.args, c.args) {
				used[i], found = true, true
				if out == nil {
					out = make(map[int32]*asking)
				}
				out[c.id] = a
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return out, true
}

// pendingLike is what approvalsOf reads of a dispatched waiting call.
type pendingLike struct {
	id   int32
	name string
	args []byte
}

// abandonAsks settles the calls held for an approval of a run that ended
// without parking on them (it failed, or ran out of time, meanwhile): each
// is abandoned as a call whose body never started, with its one
// notification; none answers the program, which has ended.
func (pk *parking) abandonAsks(ctx context.Context) {
	pk.mu.Lock()
	asks := pk.asks
	pk.asks = nil
	pk.mu.Unlock()
	for _, a := range asks {
		x := &a.n.x
		x.askParked = nil
		x.err = &api.Error{Code: api.CodeAbortedBeforeDispatch,
			Message: x.req.Tool + " was abandoned: the program finished while the call waited for an approval"}
		x.finish(ctx)
	}
}

// takeParkedDecision returns the decision given for x, a call parked for
// approval and resumed, if there is one.
func takeParkedDecision(x *execution) (ApprovalDecision, bool) {
	t := &parkedAnswers
	if t.n.Load() == 0 || !x.req.Nested {
		return ApprovalDecision{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	pa, ok := t.m[x.req.ID]
	if !ok || pa.tok != x.parent || pa.a.Decision == nil {
		return ApprovalDecision{}, false
	}
	delete(t.m, x.req.ID)
	t.n.Store(int64(len(t.m)))
	return *pa.a.Decision, true
}
