package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// MetaError is the _meta key under which a failed call's code, kind and
// violations are given as data.
const MetaError = "ptcx/error"

// MetaLedger is the _meta key under which a run_code result, failed or
// not, carries its ledger (api.Ledger): the nested calls the program made
// and the run's stats.
const MetaLedger = "ptcx/ledger"

// MetaLabels is the _meta key under which a result whose label is not
// the lowest carries it (api.Label: {"integrity", "confidentiality"}), so
// that an agent loop can decide what its model may see (docs/security.md,
// "Data flow"), and under which an approval's question carries the labels
// of the nested call it asks about, the lowest included.
const MetaLabels = "ptcx/labels"

// MetaReason is the _meta key under which an approval's question
// (elicitation/create) carries why the call asks; the question's
// MetaLabels, beside it, are what a nested call carries (elicit.go).
const MetaReason = "ptcx/reason"

// ErrorMeta is the value under MetaError.
type ErrorMeta struct {
	Code       api.Code `json:"code"`
	Kind       api.Kind `json:"kind,omitempty"`
	Violations []string `json:"violations,omitempty"`
	// Location and Stack are those of a failed run_code program (see
	// api.Error).
	Location *api.Location `json:"location,omitempty"`
	Stack    string        `json:"stack,omitempty"`
	// Policy is the flow a data-flow rule refused the call for.
	Policy *api.PolicyViolation `json:"policy,omitempty"`
}

// call sends one tools/call, whatever its name, through the executor as a
// model-direct call, with the arguments exactly as they came over the wire.
// The request's context is the call's: a client's notifications/cancelled
// cancels it. A run_code call whose request has a progress token streams
// its console lines as progress (progress.go); a call that needs approval
// asks the client when it can answer (elicit.go).
func (r *router) call(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
	var name string
	var args json.RawMessage
	if req.Params != nil {
		name, args = req.Params.Name, req.Params.Arguments
	}
	if !r.opts.NoElicitation {
		ctx = executor.WithCallApprover(ctx, callApprover(req.Session, r.opts.ElicitTimeout))
	}
	if name == registry.RunCode && r.opts.MaxProgressLines > 0 {
		var end func()
		ctx, end = startProgress(ctx, req, r.opts.MaxProgressLines)
		defer end()
	}
	call := executor.Call{Scope: r.scope, Name: name, Args: args}
	if name == registry.RunCode {
		call.Session = r.sessionName(req)
	}
	res := r.e.Execute(ctx, call)
	return toolResult(res)
}

// toolResult maps a settled result to MCP. Success: the model's text, plus
// the value as structuredContent when it is a JSON object (MCP allows no
// other kind there). Failure: isError with "CODE: text" ("CODE (kind): text"),
// and the error's data (code, kind, violations, location, stack) under
// _meta[MetaError].
func toolResult(res api.Result) *mcp.CallToolResult {
	var out *mcp.CallToolResult
	if res.Err == nil {
		out = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Text}}}
		if v := bytes.TrimSpace(res.Value); len(v) > 0 && v[0] == '{' {
			out.StructuredContent = json.RawMessage(v)
		}
	} else {
		e := res.Err
		out = &mcp.CallToolResult{
			Meta:    mcp.Meta{MetaError: ErrorMeta{Code: e.Code, Kind: e.Kind, Violations: e.Violations, Location: e.Location, Stack: e.Stack, Policy: e.Policy}},
			Content: []mcp.Content{&mcp.TextContent{Text: e.Prefix() + ": " + res.Text}},
			IsError: true,
		}
	}
	if res.Ledger != nil {
		if out.Meta == nil {
			out.Meta = mcp.Meta{}
		}
		out.Meta[MetaLedger] = res.Ledger
	}
	if !res.Labels.IsZero() {
		if out.Meta == nil {
			out.Meta = mcp.Meta{}
		}
		out.Meta[MetaLabels] = res.Labels
	}
	return out
}
