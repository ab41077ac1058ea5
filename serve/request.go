package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
)

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
		return nil, errors.New("field code: required (the program)")
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
	if err := checkIdempotencyKey(req.IdempotencyKey); err != nil {
		return nil, fmt.Errorf("field idempotency_key: %w", err)
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

// MaxIdempotencyKeyBytes bounds an idempotency_key: the key is kept with
// its execution for the retention, and in a cluster reserved in the store
// under a name derived from it, so it is an identifier, not a payload.
const MaxIdempotencyKeyBytes = 256

// checkIdempotencyKey checks an idempotency_key: empty (none), or at most
// MaxIdempotencyKeyBytes of printable text (no control characters).
func checkIdempotencyKey(key string) error {
	if len(key) > MaxIdempotencyKeyBytes {
		return fmt.Errorf("%d bytes, over the limit of %d", len(key), MaxIdempotencyKeyBytes)
	}
	for i, r := range key {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("a control character (U+%04X) at byte %d: a key is printable text", r, i)
		}
	}
	return nil
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
	if err := checkClientTools(tools); err != nil { // clienttool_bounds.go
		return err
	}
	return checkClientPolicies(tools) // policy.go
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
func workspaceState(req *ExecutionRequest) string {
	if req.WorkspaceState != "" {
		return req.WorkspaceState
	}
	return req.Session
}

// runCodeArgs are the run_code arguments of an execution.
func runCodeArgs(req *ExecutionRequest) (json.RawMessage, error) {
	desc := req.Description
	if desc == "" {
		desc = defaultDescription
	}
	args := struct {
		Code        string       `json:"code"`
		Language    api.Language `json:"language,omitempty"`
		Description string       `json:"description"`
		Limits      *RunLimits   `json:"limits,omitempty"`
	}{req.Code, req.Language, desc, req.Limits}
	if args.Limits != nil && *args.Limits == (RunLimits{}) {
		args.Limits = nil
	}
	return json.Marshal(args)
}
