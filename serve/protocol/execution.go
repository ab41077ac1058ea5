package protocol

import (
	"encoding/json"
	"time"

	"github.com/ptcx/ptcx/api"
)

// Statuses of an execution (ExecutionState.Status).
const (
	StatusRunning   = "running"
	StatusPending   = "pending"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// ExecutionRequest is the body of POST /v1/executions.
type ExecutionRequest struct {
	Code string `json:"code"`
	// Language is the program's language: typescript (the default) or
	// python, when the tenant enables it (its languages).
	Language    api.Language `json:"language,omitempty"`
	Description string       `json:"description,omitempty"`
	Scope       string       `json:"scope,omitempty"`
	// Session names a session, which is program state: with KeepState, the
	// program runs in it, and in the session's own workspace state.
	//
	// Deprecated: without KeepState, use WorkspaceState. Session alone
	// still names the workspace state and keeps no program state, as it did
	// before WorkspaceState existed (docs/service.md, "Workspace state").
	Session string `json:"session,omitempty"`
	// KeepState, with Session, runs the program in the session's program
	// state: the globals and top-level declarations its earlier keep_state
	// programs left, on whichever node (docs/service.md, "Sessions").
	KeepState bool `json:"keep_state,omitempty"`
	// WorkspaceState names the built-in workspace tools' read-before-write
	// state the execution uses: a file read under one name may be
	// overwritten only under that name. Empty: Session's, else the tenant's
	// own. Given with Session, it must be the same name.
	WorkspaceState string       `json:"workspace_state,omitempty"`
	Limits         *RunLimits   `json:"limits,omitempty"`
	ClientTools    []ClientTool `json:"client_tools,omitempty"`
	// IdempotencyKey makes a retried POST return the first one's execution
	// instead of starting another (a different body under the same key: 409).
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// Wait, default true, answers once the execution settles or turns
	// pending (at most server.max_wait_ms); false answers at once.
	Wait *bool `json:"wait,omitempty"`
	// Plan binds the execution to an approved plan (POST /v1/plans, with
	// tools or calls removed): another program is refused with DENIED
	// before it runs, and a nested call the plan does not allow is DENIED
	// (executor.Call.Plan). Not with keep_state.
	Plan *api.Plan `json:"plan,omitempty"`
}

// RunLimits are run_code limits, as in run_code's arguments: api's
// RunCodeLimits (timeout_ms, wall_ms, memory_mb, output_bytes,
// model_bytes, max_calls). Zero means the default.
type RunLimits = api.RunCodeLimits

// ClientTool is a tool the client executes: the program calls it like any
// other, and the execution turns pending until the client posts its result.
//
// Its data-flow members are a tools file's (docs/security.md, "Data
// flow"): the labels of its results, what its calls may carry, CEL
// constraints over its arguments, calls per run, cost. A bad label, a
// negative count or a constraint that does not compile is refused with 400
// naming the tool and the member.
type ClientTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Labels       *Label          `json:"labels,omitempty"`
	Accepts      *Accepts        `json:"accepts,omitempty"`
	Constraints  []string        `json:"constraints,omitempty"`
	CallsPerRun  int             `json:"calls_per_run,omitempty"`
	Cost         int64           `json:"cost,omitempty"`
	MaxCost      int64           `json:"max_cost,omitempty"`
	// NeedsApproval puts every call of the tool to a person first (an
	// approval item), then to the client (a tool item).
	NeedsApproval bool `json:"needs_approval,omitempty"`
	// Handle makes the client's successful answers reach the program as
	// handles (docs/security.md, "Handles"): the value stays with the
	// server, readable by GET /v1/executions/{id}/handles/{handle} when the
	// result holds it, and sent to another tool when the program passes it.
	Handle bool `json:"handle,omitempty"`
}

// ExecutionState is the answer of every /v1/executions endpoint.
type ExecutionState struct {
	ID        string          `json:"id"`
	Status    string          `json:"status"`
	Text      string          `json:"text,omitempty"`
	Value     json.RawMessage `json:"value,omitempty"`
	Logs      []string        `json:"logs,omitempty"`
	Stats     *Stats          `json:"stats,omitempty"`
	Calls     []CallRecord    `json:"calls,omitempty"`
	Pending   []PendingCall   `json:"pending,omitempty"`
	ExpiresAt *time.Time      `json:"expires_at,omitempty"`
	Error     *ErrorBody      `json:"error,omitempty"`
	// Labels is a settled execution's label, when it is not the lowest
	// (trusted, public): the join of every result its program read
	// (docs/security.md, "Data flow"), so a client can decide what its
	// model may see. A failed execution's error carries it too.
	Labels *api.Label `json:"labels,omitempty"`
	// Handles are the handles a completed execution's result holds (its
	// Value shows each as a placeholder): their ids, tools, sizes and
	// labels, never their values, which GET
	// /v1/executions/{id}/handles/{handle} returns (HandleValue).
	Handles []api.Handle `json:"handles,omitempty"`
}

// HandleValue is a handle with its value: the answer of GET
// /v1/executions/{id}/handles/{handle}.
type HandleValue struct {
	ID     string          `json:"id"`
	Tool   string          `json:"tool"`
	Size   int             `json:"size"`
	Labels api.Label       `json:"labels"`
	Value  json.RawMessage `json:"value"`
}

// Stats are a settled execution's numbers. ComputeMS and MemoryBytes are
// its program's (api.RunStats): the compute time it ran and its guest's
// peak memory, up to its failure for one that failed (0 when its program
// never ran).
type Stats struct {
	DurationMS  float64 `json:"duration_ms"`
	Calls       int     `json:"calls"`
	ComputeMS   float64 `json:"compute_ms"`
	MemoryBytes int64   `json:"memory_bytes"`
}

// CallRecord is one settled nested call of a program.
type CallRecord struct {
	ID         string  `json:"id"`
	Tool       string  `json:"tool"`
	OK         bool    `json:"ok"`
	Code       string  `json:"code,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

// PendingCall is a call waiting on the client: a client-side tool's call
// waiting for its result (Kind "tool"; an item without kind is one too),
// or a call waiting for a person's decision (Kind "approval": POST
// /v1/executions/{id}/approvals).
type PendingCall struct {
	ID        string          `json:"id"`
	Kind      string          `json:"kind,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Reason is an approval's question: why the call asks (a data-flow
	// rule's violation, a listener's reason).
	Reason string `json:"reason,omitempty"`
	// Labels is the data-flow label the call carried
	// ({"integrity", "confidentiality"}); an approval's only.
	Labels *api.Label `json:"labels,omitempty"`
}

// Kinds of pending call.
const (
	KindTool     = "tool"
	KindApproval = "approval"
)
