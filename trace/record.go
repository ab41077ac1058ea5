package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/policy"
)

// Version is the schema version this package writes. It reads this one,
// version 2, which has no handles and no labels raised by bodies, and
// version 1, which has no labels, denials or policies either
// (docs/trace.md).
const Version = 3

// minVersion is the oldest schema version this package reads.
const minVersion = 1

// Record is one run_code execution (docs/trace.md is its schema).
type Record struct {
	Version int `json:"version"`
	// ID is the run_code call's ID; its nested calls' IDs are
	// "<ID>:ptc:<index>".
	ID    string   `json:"id"`
	Scope string   `json:"scope"`
	Mode  api.Mode `json:"mode"`
	// Seed and ClockStart are the run's deterministic world; absent: the
	// real clock and random source (such a record replays only where the
	// program does not read them).
	Seed       *uint64 `json:"seed,omitempty"`
	ClockStart string  `json:"clock_start,omitempty"`
	Program    Program `json:"program"`
	// Tools are the names bound on the program's tools object.
	Tools  []string `json:"tools"`
	Limits *Limits  `json:"limits,omitempty"`
	// Calls are the nested calls, in submission order.
	Calls []Call `json:"calls"`
	// Logs, Result and Text are what the program wrote and returned, and
	// what the model was shown.
	Logs   []string        `json:"logs"`
	Result json.RawMessage `json:"result,omitempty"`
	Text   string          `json:"text"`
	Error  *Error          `json:"error,omitempty"`
	Stats  *Stats          `json:"stats,omitempty"`
	// Outcome is "ok", or the error's kind (CODE_RUN_FAILED) or code.
	Outcome string `json:"outcome"`
	// Labels is the run's label, the join of every result its program
	// read, when it is not the lowest (docs/security.md, "Data flow").
	Labels *api.Label `json:"labels,omitempty"`
	// Policies are the data-flow declarations of the bound tools that
	// declare one, by name, as the registry had them: a replay's
	// stand-in tools carry them, so that it recomputes the labels and
	// denials.
	Policies map[string]policy.Declaration `json:"policies,omitempty"`
	// Plan is the approved plan the run was bound to (executor.Call.Plan),
	// as far as a binding reads it: its hash, whether it is dynamic, the
	// tools it allows and its call sites (the labels, rules and cost a
	// person read are left out). A replay is bound to it, as the run was.
	// Absent for a run without a plan.
	Plan *api.Plan `json:"plan,omitempty"`
	// HandleOverBytes is the executor's handle size
	// (executor.Config.WithHandleOverBytes): a result over it reached the
	// program as a handle. Absent for 0, none.
	HandleOverBytes int `json:"handle_over_bytes,omitempty"`
	// Reads are the handles the program read (text(), json()), in order
	// (docs/trace.md, "Handles").
	Reads []Read `json:"reads,omitempty"`
}

// planOf is the plan a record keeps: what plan.Bind reads of it.
func planOf(p *api.Plan) *api.Plan {
	if p == nil {
		return nil
	}
	out := &api.Plan{Hash: p.Hash, Dynamic: p.Dynamic, Tools: slices.Clone(p.Tools), Calls: make([]api.PlanCall, len(p.Calls))}
	if out.Tools == nil {
		out.Tools = []string{}
	}
	for i, c := range p.Calls {
		out.Calls[i] = api.PlanCall{Tool: c.Tool, Args: c.Args, Computed: c.Computed, Repeats: c.Repeats, Line: c.Line}
	}
	return out
}

// Program is the program as the caller gave it.
type Program struct {
	SHA256 string `json:"sha256"`
	Code   string `json:"code"`
	// Language is the program's language as given (run_code's language):
	// absent for TypeScript, "python" for Python. Replay runs it in it.
	Language    api.Language    `json:"language,omitempty"`
	Description string          `json:"description,omitempty"`
	Limits      json.RawMessage `json:"limits,omitempty"` // the caller's lower limits, as given
	// Args are run_code's arguments as given, when it refused them
	// (INVALID_ARGS: a duplicate key, a missing field…) before the program
	// ran; replay passes them unchanged. Absent otherwise.
	Args json.RawMessage `json:"args,omitempty"`
}

// Call is one nested call.
type Call struct {
	// Index is the call's place in submission order, from 1.
	Index  int             `json:"index"`
	ID     string          `json:"id"`
	Parent string          `json:"parent"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	OK     bool            `json:"ok"`
	Value  json.RawMessage `json:"value,omitempty"`
	Error  *Error          `json:"error,omitempty"`
	// Labels is the result's label when it is not the lowest.
	Labels *api.Label `json:"labels,omitempty"`
	// Raised is the label the tool's body (api.Output.Labels) or its
	// finalizer gave the result, beyond its declaration: a replay's
	// stand-in raises the result by it again. Absent when they said
	// nothing.
	Raised *api.Label `json:"raised,omitempty"`
	// Handle is the handle the program was answered with instead of the
	// value, which Value still has (a replay answers with a handle to
	// it); absent for a call answered with its value.
	Handle *Handle `json:"handle,omitempty"`
	// Handles are the handles the call's arguments held, by ID and the
	// call that made each; Args has their values in their place.
	Handles []Passed `json:"handles,omitempty"`
	// StartUS is when the body started, in microseconds from the start of
	// run_code's body; absent when it never started (refused, abandoned).
	StartUS *int64 `json:"start_us,omitempty"`
	// EndUS is when the body ended (its start plus the body's own time);
	// absent when it never started.
	EndUS *int64 `json:"end_us,omitempty"`
	// SettledUS is when the call's result was published.
	SettledUS int64 `json:"settled_us"`
	// Completed is the call's place, from 1, in the order the executor
	// completed the run's nested calls (executor.Notification.Seq).
	Completed int `json:"completed"`
}

// Handle is a handle a nested call was answered with (api.Handle but its
// value, which the call's Value is).
type Handle struct {
	// ID is the handle's name in placeholders: random in every run.
	ID     string    `json:"id"`
	Tool   string    `json:"tool"`
	Size   int       `json:"size"`
	Labels api.Label `json:"labels"`
}

// Passed is a handle passed in a call's arguments.
type Passed struct {
	ID string `json:"id"`
	// Call is the index of the call that was answered with it; 0 when
	// the record does not have it (a handle made by an earlier program of
	// a session, or before a resume).
	Call int `json:"call"`
}

// Read is the program reading a handle.
type Read struct {
	// Handle is the handle's ID, Call the index of the call answered with
	// it (0 when the record does not have it).
	Handle string `json:"handle"`
	Call   int    `json:"call"`
	// As is "text" or "json".
	As string `json:"as"`
	// Labels is the handle's label, which the read joined into the
	// program's context.
	Labels api.Label `json:"labels"`
}

// Error is a failed call's error: what the program (a nested call) or the
// model (run_code) saw.
type Error struct {
	Code    api.Code `json:"code"`
	Kind    api.Kind `json:"kind,omitempty"`
	Message string   `json:"message"`
	// Policy is the flow a data-flow rule refused the call for (DENIED).
	Policy *api.PolicyViolation `json:"policy,omitempty"`
}

// Limits are a run's limits.
type Limits struct {
	ComputeMS           int64 `json:"compute_ms"`
	WallMS              int64 `json:"wall_ms"`
	MemoryBytes         int64 `json:"memory_bytes"`
	OutputBytes         int   `json:"output_bytes"`
	MaxPendingCalls     int   `json:"max_pending_calls"`
	MaxCalls            int   `json:"max_calls"`
	MaxCallArgBytes     int   `json:"max_call_arg_bytes"`
	MaxInFlightArgBytes int   `json:"max_in_flight_arg_bytes"`
}

// Stats are the run's measurements.
type Stats struct {
	ComputeUS   int64 `json:"compute_us"`
	WallUS      int64 `json:"wall_us"`
	Calls       int   `json:"calls"`
	MemoryBytes int64 `json:"memory_bytes"`
	// DurationUS is the whole execution's, phases included.
	DurationUS int64 `json:"duration_us"`
}

func limitsOf(l api.Limits) *Limits {
	return &Limits{ComputeMS: l.ComputeTime.Milliseconds(), WallMS: l.WallTime.Milliseconds(), MemoryBytes: l.MemoryBytes,
		OutputBytes: l.OutputBytes, MaxPendingCalls: l.MaxPendingCalls, MaxCalls: l.MaxCalls,
		MaxCallArgBytes: l.MaxCallArgBytes, MaxInFlightArgBytes: l.MaxInFlightArgBytes}
}

// API returns the limits as the executor takes them.
func (l *Limits) API() api.Limits {
	if l == nil {
		return api.Limits{}
	}
	return api.Limits{ComputeTime: time.Duration(l.ComputeMS) * time.Millisecond, WallTime: time.Duration(l.WallMS) * time.Millisecond,
		MemoryBytes: l.MemoryBytes, OutputBytes: l.OutputBytes, MaxPendingCalls: l.MaxPendingCalls, MaxCalls: l.MaxCalls,
		MaxCallArgBytes: l.MaxCallArgBytes, MaxInFlightArgBytes: l.MaxInFlightArgBytes}
}

func errorOf(e *api.Error) *Error {
	if e == nil {
		return nil
	}
	return &Error{Code: e.Code, Kind: e.Kind, Message: e.Message, Policy: e.Policy}
}

// labelOf is a label as a record has it: nil for the lowest.
func labelOf(l api.Label) *api.Label {
	if l.IsZero() {
		return nil
	}
	return &l
}

// outcomeOf is a result's outcome: "ok", or its error's kind, else code.
func outcomeOf(e *api.Error) string {
	switch {
	case e == nil:
		return "ok"
	case e.Kind != "":
		return string(e.Kind)
	default:
		return string(e.Code)
	}
}

// Hash is the program hash a Record carries: SHA-256 of the code, in hex.
func Hash(code string) string {
	h := sha256.Sum256([]byte(code))
	return hex.EncodeToString(h[:])
}
