package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/resolve"
	"github.com/ptcx/ptcx/plan"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

const deploymentScope = registry.Deployment

// Executor runs calls against a Registry. It is safe for concurrent use.
type Executor struct {
	reg      *registry.Registry
	resolve  resolve.Resolver // reg's, the one route to a tool body
	changes  resolve.Changes  // reg's count of changes: when a run's resolutions are stale (resolved.go)
	cfg      Config
	limits   api.Limits // deployment limits, defaults filled in
	sessions *sessions  // run_code sessions (session.go)
	idle     idleCounts // idle parks (idlepark.go)
}

// New returns an Executor over reg. It fails on an invalid configuration:
// negative limits, a memory limit no run could work within, a program
// size limit outside [0, DefaultMaxCodeBytes], or an idle park it cannot
// make (WithParkIdle).
func New(reg *registry.Registry, cfg Config) (*Executor, error) {
	if reg == nil {
		return nil, fmt.Errorf("executor: nil registry")
	}
	if err := cfg.limits.Validate(); err != nil { // limits no run could start with fail here, not as INTERNAL at every run
		return nil, fmt.Errorf("executor: %w", err)
	}
	if cfg.maxCodeBytes < 0 || cfg.maxCodeBytes > DefaultMaxCodeBytes {
		return nil, fmt.Errorf("executor: the program size limit of %d bytes is outside [0, %d] (0 means the default, %d)",
			cfg.maxCodeBytes, DefaultMaxCodeBytes, DefaultMaxCodeBytes)
	}
	if cfg.maxCodeBytes == 0 {
		cfg.maxCodeBytes = DefaultMaxCodeBytes
	}
	if cfg.maxParallel < 1 {
		cfg.maxParallel = DefaultMaxParallel
	}
	if cfg.newID == nil {
		cfg.newID = nextCallID
	}
	if cfg.languages != nil {
		ls, err := api.CheckLanguages(cfg.languages)
		if err != nil {
			return nil, fmt.Errorf("executor: %w", err)
		}
		cfg.languages = ls
	}
	if err := cfg.checkParkIdle(); err != nil {
		return nil, err
	}
	sl, err := cfg.sessions.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Executor{reg: reg, resolve: resolve.Open(reg), changes: resolve.OpenChanges(reg), cfg: cfg, limits: cfg.limits.WithDefaults(),
		sessions: &sessions{limits: sl, store: cfg.sessionStore}}, nil
}

// Registry returns the registry the executor resolves against.
func (e *Executor) Registry() *registry.Registry { return e.reg }

// Call is one model-direct tool call, as a model emitted it.
type Call struct {
	// ID identifies the call; empty means "mint one".
	ID string
	// Scope is the caller's scope; empty means registry.Deployment.
	Scope string
	// Name is the tool name the model used.
	Name string
	// Args is the arguments' JSON text; empty means {}.
	Args json.RawMessage
	// World, for a run_code call, is the deterministic world its program
	// runs in (seed and clock start: wasmhost.World); nil means the
	// Config's (WithWorld), else the runtime's. Other tools ignore it.
	World *wasmhost.World
	// Session, for a run_code call, names the session its program runs in:
	// the programs of one session in one scope share one program state (a
	// REPL: top-level declarations and globalThis persist from one to the
	// next; session.go). Empty runs the program in a fresh state, as
	// always. Sessions are keyed by (Scope, Session): never shared across
	// scopes. Other tools ignore it.
	Session string
	// Plan, for a run_code call, binds its program to an approved plan
	// (package plan, plan.go): the program must be the one the plan was
	// read from, and its nested calls are only those the plan allows;
	// nil runs it unbound. Other tools ignore it.
	Plan *plan.Plan
}

// Execute runs one model-direct call through every phase and returns its
// settled result. It never panics on a tool's behalf: failures are in
// Result.Err.
func (e *Executor) Execute(ctx context.Context, call Call) api.Result {
	x := e.newExecution(call, nil)
	if x.prepare(ctx) {
		x.dispatch(ctx)
		x.postExecute(ctx)
	}
	return x.finish(ctx)
}

// Class is a call's scheduling class.
type Class int

const (
	// Exclusive calls run alone.
	Exclusive Class = iota
	// Concurrent calls may overlap with other concurrent calls.
	Concurrent
)

// SchedulingClass returns how a model-direct call would be scheduled, through
// the same resolver as execution: a call that cannot execute (unknown,
// collapsed) is Exclusive, whatever the tool declares.
func (e *Executor) SchedulingClass(scope, name string) Class {
	res := e.resolve(scope, name, false)
	if res.Definition != nil && res.Definition.ConcurrencySafe() {
		return Concurrent
	}
	return Exclusive
}

var callCounter atomic.Uint64

func nextCallID() string {
	return fmt.Sprintf("call_%d", callCounter.Add(1))
}

// execution is one call travelling through the phases. It is owned by one
// goroutine at a time.
type execution struct {
	e      *Executor
	req    Request
	parent *token // the run_code execution a nested call belongs to
	start  time.Time

	created bool
	res     resolve.Resolution
	def     *resolve.Definition // what may execute; nil when refused
	fin     *resolve.Definition // whose finalizer applies; nil for none
	in      resolve.Args        // the arguments, read once (phase 1)
	args    map[string]any      // run_code's, decoded
	session string              // Call.Session of a model-direct call
	plan    *plan.Plan          // Call.Plan of a model-direct call
	planned bool                // a nested call the run's approved plan covers (plan.go)

	run atomic.Pointer[RunInfo] // run_code's sandbox run, once it ran

	ran      bool          // the body was started
	life     body          // the body's lifetime, once started (body.go)
	bodyFrom int64         // when the body started (monotonic, from 1; 0: not timed): for a nested call, or with result listeners
	bodyTime time.Duration // from the body's start to the call's settlement
	seq      int64         // completion order among the nested calls of one run (from 1)
	out      api.Output
	err      *api.Error

	// Data flow (flow.go).
	ctxLabel api.Label            // a nested call's: its program's context label when it made the call
	runLabel api.Label            // run_code's: its program's context label at the end
	handleIn *handleArgs          // a nested call's handles in its arguments (handles.go), or nil
	flowAsk  *api.PolicyViolation // the rule put to the approver: a flow past accepts (on_violation: ask), or needs_approval
	cost     int64                // what the call cost (its tool's cost), once allowed

	askParked *asking // set when phase 5 held the call for an approval (park_approval.go)
}

func (e *Executor) newExecution(call Call, parent *token) *execution {
	x := &execution{}
	e.initExecution(x, call, parent)
	return x
}

// initExecution sets up x, which is zero, as newExecution does: a nested
// call's execution is part of its scheduler record (scheduler.go), one
// allocation for both.
func (e *Executor) initExecution(x *execution, call Call, parent *token) {
	x.e, x.parent = e, parent
	if len(e.cfg.onResult) > 0 {
		x.start = time.Now() // for Notification.Duration
	}
	x.req = Request{ID: call.ID, Scope: call.Scope, Tool: call.Name, Args: call.Args, World: call.World}
	if parent == nil {
		x.session, x.plan = call.Session, call.Plan
	}
	if x.req.World == nil && parent == nil && call.Name == registry.RunCode {
		x.req.World = e.cfg.world
	}
	if x.req.Scope == "" {
		x.req.Scope = deploymentScope
	}
	if len(x.req.Args) == 0 {
		x.req.Args = json.RawMessage("{}")
	}
}

// fail records the call's error; the first one wins.
func (x *execution) fail(err *api.Error) {
	if x.err == nil {
		x.err = err
	}
}

// prepare runs the phases before dispatch, in order. It reports whether the
// call may be dispatched.
func (x *execution) prepare(ctx context.Context) bool {
	return x.create(ctx) &&
		x.checkCancelled(ctx) &&
		x.validate() &&
		x.withinPlan() &&
		x.policy(ctx)
}
