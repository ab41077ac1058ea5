package executor

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// Request describes a call to the policy hooks: everything they may inspect
// (run_code's program text included, in Args). It is a copy; changing it
// changes nothing.
type Request struct {
	ID     string
	Scope  string
	Tool   string
	Args   json.RawMessage
	Nested bool
	// Parent is the ID of the run_code call a nested call belongs to.
	Parent string
	// Labels is the label a nested call carries: its program's context
	// label when it made the call, the join of every result delivered
	// into the program before (docs/security.md, "Data flow"). What an
	// approver shows a person beside the question. Zero ({trusted,
	// public}) for a model-direct call: what the model read before it is
	// not the executor's to know.
	Labels api.Label
	// World is a run_code call's deterministic world (Call.World, else
	// Config.WithWorld); nil for the runtime's. Shared: do not change it.
	World *wasmhost.World
}

// Verdict is a pre-execute listener's answer.
type Verdict int

const (
	// Allow lets the call continue to the next listener.
	Allow Verdict = iota
	// Deny stops the call with DENIED and the decision's reason.
	Deny
	// Ask sends the call to the Approver once every listener has answered.
	Ask
)

// Decision is what a pre-execute listener returns.
type Decision struct {
	Verdict Verdict
	Reason  string
}

// PreExecuteListener sees every call that passed validation, in order of
// installation. An error (or a panic) stops the call with INTERNAL.
type PreExecuteListener func(ctx context.Context, req Request) (Decision, error)

// Approval is an approver's answer.
type Approval int

const (
	// Reject denies the call.
	Reject Approval = iota
	// ApproveOnce lets this one call continue.
	ApproveOnce
)

// Approver decides calls that ask (Config.WithApprover): question says
// why, every reason joined with "; ", and req.Labels what a nested call
// carries. An error, a cancelled context or a Reject denies the call with
// the reason given.
type Approver interface {
	Approve(ctx context.Context, req Request, question string) (Approval, string, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req Request, question string) (Approval, string, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req Request, question string) (Approval, string, error) {
	return f(ctx, req, question)
}

// Guard returns a non-empty reason to deny a call. Guards run after approval:
// the deployment's first, then the scope chain's from farthest to nearest.
// An error (or a panic) stops the call with INTERNAL.
type Guard func(ctx context.Context, req Request) (reason string, err error)

// PostDecision is what a post-execute listener returns.
type PostDecision struct {
	// Block turns the successful result into DENIED with Feedback.
	Block    bool
	Feedback string
	// Replace, when non-nil, replaces the value (and its rendered text).
	Replace json.RawMessage
}

// PostExecuteListener sees every successful body result. Listeners never
// run concurrently with each other; nested calls reach them in the order
// their bodies finish (completion order), except that an exclusive call's
// comes after every earlier call's and before any later one's. An error (or a panic) turns the result into INTERNAL.
type PostExecuteListener func(ctx context.Context, req Request, value json.RawMessage) (PostDecision, error)

// Start is the notification that a body is about to run.
type Start struct {
	Request
	At time.Time
}

// Notification is the one notification every execution emits when it
// settles.
type Notification struct {
	Request
	Result api.Result
	// Duration is the whole call's, from its submission to its result.
	Duration time.Duration
	// Body is the time the body ran, from its start to the call's
	// settlement (0 when it never started).
	Body time.Duration
	// Seq is a nested call's place in the order its run_code execution's
	// calls completed, from 1 (0 for a call made by a model directly).
	Seq int64
	// Run describes the sandbox run behind a run_code execution; nil for
	// other tools, and for a run_code call that failed before its program
	// ran (a syntax error, a refusal in an earlier phase).
	Run *RunInfo
	// Plan is the approved plan a run_code call was made with (Call.Plan),
	// as the call gave it, also when it was refused before its program
	// ran (another program's plan); nil without one, and for a run
	// resumed from parked bytes (Run.Plan has what it was bound to).
	Plan *api.Plan
	// Raised is the label a nested call's body (api.Output.Labels) and
	// its tool's finalizer gave its result, beyond its declaration and
	// the call's: Result.Labels is at least this. Zero when they said
	// nothing, and for a call whose body failed.
	Raised api.Label
	// Handles are the IDs of the handles a nested call's arguments held
	// (Args has their values in their place), sorted; nil for none.
	Handles []string
}

// RunInfo is what a run_code execution gave the sandbox and what the run
// measured.
type RunInfo struct {
	// Tools are the names bound on the program's tools object.
	Tools []string
	// Limits are the run's limits: the caller's, clamped to the
	// deployment's, defaults filled in.
	Limits api.Limits
	// World is the run's deterministic world; nil for the runtime's.
	World *wasmhost.World
	// Stats are the run's measurements (compute, wall, calls, memory),
	// also for a run that failed.
	Stats wasmhost.Stats
	// IdleParks is how many times the run was idle-parked
	// (Config.WithParkIdle), and IdleParked how long it was parked so, in
	// all (Stats.Wall counts it).
	IdleParks  int
	IdleParked time.Duration
	// Plan is what the approved plan the run was bound to allows
	// (plan.Bound.Plan: the approved plan met with the program's own),
	// also for a run resumed from parked bytes; nil for a run without a
	// plan.
	Plan *api.Plan
	// HandleOver is Config.WithHandleOverBytes: results over this many
	// bytes reached the program as handles; 0 for none.
	HandleOver int
}
