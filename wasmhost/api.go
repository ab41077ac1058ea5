package wasmhost

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// Program is one run_code program, ready for the guest.
type Program struct {
	// JS is the program's source. For TypeScript (the default Language), the
	// body of an async function, in plain JavaScript (already
	// type-stripped): `await` and `return` work at its top level; the value
	// it returns becomes Outcome.Result. For LanguagePython, Python source: a
	// module body with top-level `await`, whose final expression statement's
	// value becomes Outcome.Result.
	JS string
	// Language is the program's language, which selects the guest that
	// runs it: "" or api.LanguageTypeScript (QuickJS), or
	// api.LanguagePython (CPython: python.go; it fails with ErrNoPython in
	// a build without the Python guest; it runs on either engine).
	// A Python run's memory limit must be at least
	// api.PythonMinMemoryBytes; it is suspended, resumed and run in a
	// Session as a TypeScript run is.
	Language api.Language
	// Tools are the names bound as async functions on the program's `tools`
	// object, exactly as given, each at most once (Run refuses a name given
	// twice, or one that is not valid UTF-8). The host does not check them
	// against anything else: the Dispatcher decides what a name means.
	Tools []string
	// Catalog, when not empty, is the JSON text of the catalog of a large
	// tool set, from which the program's tools.$search and tools.$describe
	// answer inside the sandbox (docs/abi.md says its shape; the executor
	// builds it, executor/catalog.go). The guest parses it only when the
	// program first asks; empty means the program has neither function.
	Catalog string
	// LexicalTools gives the program its tools only in the scope its
	// wrapper puts around the program's, not as a global: code the
	// program makes from text (an indirect eval, the Function
	// constructor), which runs in the global scope,
	// cannot reach them, so every route to a tool is the name tools in the
	// program's own text. The executor sets it for a run bound to a plan
	// (package plan). Ignored in a session, whose programs share a global
	// tools.
	LexicalTools bool
	// Limits for this run. A zero field means the Runtime's limit; a field
	// larger than the Runtime's limit is clamped to it (a caller may lower a
	// limit, never raise it).
	Limits api.Limits
	// Deadline, when not zero and sooner than Limits.WallTime from the
	// start of Run, is the run's wall deadline instead. The executor
	// gives the deadline of the program's nested calls, so that a call
	// stopped at the wall deadline and the program itself end at the same
	// instant: the run then ends as a timeout, never as the exception the
	// stopped call's rejection would raise a moment earlier.
	Deadline time.Time
	// World, when set, gives this run a deterministic world of its own,
	// whatever the Runtime's Config says: see World. Nil means the
	// Runtime's (Config.WithDeterministic, else the real clock and
	// crypto/rand).
	World *World
	// Tenant is the run's fairness key. Runs that wait (for admission, or
	// for a guest slot to execute in) are served round robin across
	// tenants, and first come first served within one, so that a tenant
	// with a thousand runs waiting delays another's by at most one turn per
	// waiting tenant, not by the thousand; a long computation gives its
	// slot to the next tenant's guest every slot quantum (10 ms). Empty is
	// one tenant like any other, shared by every run that names none. It
	// is a key, never shown to the program; the Runtime does not bound
	// how many runs one tenant has (a service does: serve's quotas).
	Tenant string
	// Suspend, when set, is asked at every quiescent point of the run
	// (after each export that leaves the program waiting on nested calls
	// or timers) whether to suspend it there; true ends Run with
	// Outcome.Suspended, a snapshot Runtime.Resume continues from
	// (suspend.go). While it is set, the calls a program makes are held by
	// the run until it next waits or polls, so that a suspension finds
	// them not yet dispatched. It needs the Runtime's image
	// (Config.WithImage, the default).
	Suspend func(Quiescence) bool
	// Recheck, when set with Suspend, has Suspend asked again whenever a
	// value is received from it while the run waits (nothing to feed the
	// guest): for a Dispatcher whose call, dispatched, turned into one the
	// run may be suspended on (the executor's calls held for an approval)
	// with no export to come that would ask. A value sent while the guest
	// runs is taken at its next wait; the quiescent point after an export
	// asks anyway. Use a channel with a buffer of one and send without
	// blocking.
	Recheck <-chan struct{}
	// SuspendIdle, when above zero (Suspend must be set), has Suspend
	// asked once more whenever the run has waited that long with nothing
	// to feed the guest since the guest last ran (on timers, on calls
	// whose bodies run elsewhere), there, with Quiescence.Idle set; it is
	// asked again only once the guest has run again. A run suspended there
	// keeps its calls in flight running in this process, and its snapshot
	// is charged to committed memory until it resumes or is released
	// (suspend_idle.go). A run whose goroutine is lent to an
	// IdleDispatcher (IdleDispatcher.Idle) at that point is handed over to
	// a new goroutine, which may suspend it while the call goes on on the
	// lent one. Zero, the default: Suspend is asked only at the quiescent
	// points after exports. Negative is refused.
	SuspendIdle time.Duration
	// Session, when set, runs the program in that session's state, as the
	// next program of a REPL: the top-level declarations of the session's
	// programs before it are in scope, globalThis is as they left it
	// (session.go). Its limits, tools, logs, result and world are its own.
	// It cannot be set with Suspend.
	Session *Session
}

// World is a deterministic world for one run: a clock that starts at Start
// and advances 1 ms per reading (Date, performance.now), and a random source
// (Math.random, crypto.getRandomValues) seeded with Seed. Two runs of one
// program with one World see the same sequence, whatever ran before them
// and however many run at once. Timers count from a virtual clock that
// advances only as timers fire (the deadline of the last one fired, else
// the run's start), so they fire in the order of those deadlines (ties in
// the order they were set), however long the guest computed or waited in
// between; each still waits until its deadline in real time.
type World struct {
	Seed uint64
	// Start is the clock's first reading; the zero time means DefaultEpoch.
	Start time.Time
}

// DefaultEpoch returns where a deterministic clock starts unless told
// otherwise: 2022-01-01T00:00:00Z.
func DefaultEpoch() time.Time { return time.Unix(0, world.DefaultEpoch).UTC() }

// Dispatcher receives the nested calls a program makes. The executor
// implements it; wasmhost never imports the executor.
type Dispatcher interface {
	// Dispatch registers one nested call made by the program. It must not
	// block: the call runs elsewhere (or, for an IdleDispatcher, later), and
	// done is called exactly once with its outcome, from any goroutine,
	// possibly before Dispatch returns. args is the dispatcher's to keep:
	// the Runtime never touches it again. Calls made after Run returned are
	// never made: the Runtime stops dispatching when the program settles.
	Dispatch(name string, args json.RawMessage, done func(CallResult))
}

// An IdleDispatcher is a Dispatcher that can carry the one nested call the
// guest waits on, on the run's own goroutine, sparing the two goroutine
// hand-offs (to a worker and back) that otherwise dominate the cost of an
// awaited call. Run finds it by type assertion. The executor's scheduler is
// the one in ptcx (executor/inline.go).
//
// Once Run has called Flush (it does before the program starts), the
// dispatcher may hold the calls Dispatch receives instead of starting them:
// Run calls Flush, or Idle, before it next feeds the guest anything or
// waits, and Flush at every poll from the second of one export on (a long
// computation), so a held call never waits for more than that.
type IdleDispatcher interface {
	Dispatcher
	// Flush starts every call Dispatch received and did not start. It must
	// not block.
	Flush()
	// Idle is called instead of Flush when the guest waits on exactly one
	// nested call and nothing else (no other call, no timer). It may run
	// that call to completion on this goroutine, reporting its outcome
	// before it returns; otherwise it must start the call (as Flush) and
	// return at once.
	//
	// ctx ends with the run (cancellation, Close, the wall deadline). A
	// call that overstays (a body that ignores its context) must not hold
	// the run: the dispatcher reports the call's outcome from another
	// goroutine and calls handover, and a new goroutine drives the run
	// from then on; nothing this goroutine reports afterwards counts.
	// handover is harmless once Idle has returned, and when called twice.
	//
	// With Program.SuspendIdle, the Runtime hands the run over itself at
	// the idle point while Idle runs, and may suspend it there: the call
	// goes on on this goroutine and its outcome, reported as always,
	// answers the run resumed from the suspension (Resumption.Attach). A
	// dispatcher that lets such a run suspend runs the call under a
	// context of its own that outlives the run: ctx ends as the run is
	// suspended.
	Idle(ctx context.Context, handover func())
}

// DispatcherFunc adapts a function to the Dispatcher interface.
type DispatcherFunc func(name string, args json.RawMessage, done func(CallResult))

// Dispatch calls f.
func (f DispatcherFunc) Dispatch(name string, args json.RawMessage, done func(CallResult)) {
	f(name, args, done)
}

// HandleCall is the name of the nested call the guest makes to read a
// handle's value (docs/abi.md, "Handles"): a run accepts it whatever its
// Tools, and a Dispatcher that answers calls with handles answers it too.
// No tool can have it; no program can make it (the prelude keeps its
// function to itself).
const HandleCall = abi.HandleCall

// CallResult is the outcome of one nested call, as the program will see it:
// OK resolves the promise with Value; otherwise the promise rejects with a
// ToolCallError carrying Message and Code (its code property; empty is
// TOOL_FAILED).
type CallResult struct {
	OK      bool
	Value   json.RawMessage
	Message string
	Code    api.Code
	// Handle (with OK) says Value is the envelope of a handle, not a
	// value: the promise resolves with the Handle object the prelude
	// makes from it (docs/abi.md, "Handles"). A value that looks like an
	// envelope is a value: only this flag makes a handle.
	Handle bool
}

// Outcome is what a program that settled normally produced.
type Outcome struct {
	// Logs are the console lines in the order they were written. Lines from
	// console.warn and console.error carry a "[warn] " or "[error] " prefix.
	Logs []string
	// Result is the JSON of the value the program returned, or nil when it
	// returned undefined.
	Result json.RawMessage
	// Stats describe the run.
	Stats Stats
	// Suspended is set, and Logs and Result are empty, when Program.Suspend
	// suspended the run: the snapshot to resume it from (its logs so far
	// are in it, and in the Outcome of the run that finishes).
	Suspended *Suspended
}

// Stats are measurements of one run.
type Stats struct {
	Compute time.Duration // CPU time the guest used (see api.Limits.ComputeTime)
	Wall    time.Duration // from the start of Run to its end
	Calls   int           // nested calls dispatched
	Memory  int64         // guest linear memory at the end, in bytes
}

// RunError is the error Run returns when the program did not settle normally.
// Everything in it is safe to show to the model: it never contains host paths,
// host stack traces or tokens.
type RunError struct {
	Kind    api.Kind
	Message string
	// Stack is the JavaScript stack of an exception, when there is one.
	Stack string
	// Logs are the console lines written before the failure (for
	// KindOutputLimit, the prefix that fits the limit).
	Logs []string
	// Line and Column locate a syntax error (1-based), when known.
	Line, Column int
	// Cause is the host-side error behind a trap, timeout or abort, for the
	// host's logs; it is never shown to the program.
	Cause error
	// SessionReset is set when the run was in a Session whose state this
	// failure dropped (session.go): the session's next run starts afresh.
	SessionReset bool
}

func (e *RunError) Error() string {
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}

// Unwrap returns the host-side cause.
func (e *RunError) Unwrap() error { return e.Cause }
