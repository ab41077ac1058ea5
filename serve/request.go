package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/plan"
	"github.com/ptcx/ptcx/registry"
)

// Statuses of an execution.
const (
	StatusRunning   = "running"
	StatusPending   = "pending"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// ExecutionRequest is the body of POST /v1/executions.
type ExecutionRequest struct {
	Code        string `json:"code"`
	Description string `json:"description,omitempty"`
	Scope       string `json:"scope,omitempty"`
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
	Plan *plan.Plan `json:"plan,omitempty"`
}

// ClientTool is a tool the client executes: the program calls it like any
// other, and the execution turns pending until the client posts its result.
type ClientTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
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

// PendingCall is a client-side call waiting for its result.
type PendingCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolResultsRequest is the body of POST /v1/executions/{id}/tool_results.
type ToolResultsRequest struct {
	Results []ToolResult `json:"results"`
}

// ToolResult answers one pending call.
type ToolResult struct {
	ID    string           `json:"id"`
	OK    bool             `json:"ok"`
	Value json.RawMessage  `json:"value,omitempty"`
	Error *ToolResultError `json:"error,omitempty"`
}

// ToolResultError is a failed client-side call: the program gets a
// ToolCallError with code TOOL_FAILED and this message.
type ToolResultError struct {
	Message string `json:"message"`
}

// CallRequest is the body of POST /v1/calls.
type CallRequest struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Scope     string          `json:"scope,omitempty"`
}

// CallResponse is the answer of POST /v1/calls: the envelope of `ptcx call`.
type CallResponse struct {
	OK    bool            `json:"ok"`
	Value json.RawMessage `json:"value,omitempty"`
	Text  string          `json:"text,omitempty"`
	Error *ErrorBody      `json:"error,omitempty"`
}

// readBody reads a request body of at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *httpError) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, errorf(CodeTooLarge, "the request body is over the maximum of %d bytes (server.max_body_bytes)", limit)
		}
		return nil, errorf(CodeBadRequest, "reading the request body: %v", err)
	}
	return data, nil
}

func badRequest(what string, err error) *httpError {
	return errorf(CodeBadRequest, "%s: %v", what, err)
}

// DecodeExecutionRequest decodes and checks a POST /v1/executions body.
func DecodeExecutionRequest(data []byte) (*ExecutionRequest, error) {
	var req ExecutionRequest
	if err := decodeStrict(data, &req); err != nil {
		return nil, err
	}
	if req.Code == "" {
		return nil, errors.New("field code: required (the TypeScript program)")
	}
	if err := checkClientToolList(req.ClientTools); err != nil {
		return nil, err
	}
	if req.Session != "" {
		if err := checkSession(req.Session); err != nil {
			return nil, fmt.Errorf("field session: %w", err)
		}
	}
	if req.WorkspaceState != "" {
		if err := checkSession(req.WorkspaceState); err != nil {
			return nil, fmt.Errorf("field workspace_state: %w", err)
		}
	}
	if req.KeepState && req.Session == "" {
		return nil, errors.New("field keep_state: requires field session (the name of the session whose program state the program runs in)")
	}
	if req.Session != "" && req.WorkspaceState != "" && req.Session != req.WorkspaceState {
		if req.KeepState {
			return nil, fmt.Errorf("field workspace_state: %q is not the session %q: a keep_state execution uses its session's own workspace state; leave workspace_state out or give the session's name", req.WorkspaceState, req.Session)
		}
		return nil, fmt.Errorf("field workspace_state: %q and field session %q name two workspace states: session without keep_state is the deprecated name of workspace_state; give workspace_state alone", req.WorkspaceState, req.Session)
	}
	if req.Limits != nil {
		if err := api.RunCodeLimits(*req.Limits).CheckNotNegative(); err != nil {
			return nil, fmt.Errorf("field limits.%w", err)
		}
	}
	if err := checkPlan(&req); err != nil { // plan.go
		return nil, err
	}
	return &req, nil
}

// checkClientToolList checks an execution's client tools: their count,
// names and schemas.
func checkClientToolList(tools []ClientTool) error {
	if len(tools) > DefaultMaxClientTools {
		return fmt.Errorf("field client_tools: %d tools is over the maximum of %d", len(tools), DefaultMaxClientTools)
	}
	seen := map[string]bool{}
	for i, t := range tools {
		switch {
		case !registry.ValidName(t.Name) || t.Name == registry.RunCode:
			return fmt.Errorf("field client_tools[%d].name: %q is not a valid tool name", i, t.Name)
		case seen[t.Name]:
			return fmt.Errorf("field client_tools[%d].name: %q appears twice", i, t.Name)
		case len(t.InputSchema) == 0:
			return fmt.Errorf("field client_tools[%d].input_schema: required (a JSON Schema object)", i)
		}
		seen[t.Name] = true
	}
	return checkClientTools(tools) // clienttool_bounds.go
}

// DecodeToolResults decodes and checks a tool_results body.
func DecodeToolResults(data []byte) (*ToolResultsRequest, error) {
	var req ToolResultsRequest
	if err := decodeStrict(data, &req); err != nil {
		return nil, err
	}
	for i, r := range req.Results {
		switch {
		case r.ID == "":
			return nil, fmt.Errorf("field results[%d].id: required (a pending call's id)", i)
		case r.OK && r.Error != nil:
			return nil, fmt.Errorf("field results[%d]: ok is true and error is set", i)
		case !r.OK && r.Error == nil:
			return nil, fmt.Errorf("field results[%d].error: required when ok is false", i)
		}
		if err := checkToolResult(i, r); err != nil { // clienttool_bounds.go
			return nil, err
		}
	}
	return &req, nil
}

// DecodeCallRequest decodes and checks a POST /v1/calls body.
func DecodeCallRequest(data []byte) (*CallRequest, error) {
	var req CallRequest
	if err := decodeStrict(data, &req); err != nil {
		return nil, err
	}
	if req.Name == "" {
		return nil, errors.New("field name: required (the tool to call)")
	}
	return &req, nil
}

// workspaceState is the name of the workspace state the execution uses:
// WorkspaceState, or Session (the deprecated alias without KeepState, the
// session's own with it), or "" for the tenant's own. DecodeExecutionRequest
// has checked that the two agree when both are given.
func (req *ExecutionRequest) workspaceState() string {
	if req.WorkspaceState != "" {
		return req.WorkspaceState
	}
	return req.Session
}

// runCodeArgs are the run_code arguments of an execution.
func (req *ExecutionRequest) runCodeArgs() (json.RawMessage, error) {
	desc := req.Description
	if desc == "" {
		desc = defaultDescription
	}
	args := struct {
		Code        string     `json:"code"`
		Description string     `json:"description"`
		Limits      *RunLimits `json:"limits,omitempty"`
	}{req.Code, desc, req.Limits}
	if args.Limits != nil && *args.Limits == (RunLimits{}) {
		args.Limits = nil
	}
	return json.Marshal(args)
}
