package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/text"
)

// maxElicitArgs is how much of a call's arguments the approval question
// quotes.
const maxElicitArgs = 512

// sessionlessProtocol is the first protocol version in which a server may
// not send requests of its own while it serves one (it returns input
// requests instead, which this server does not do): with a client on it,
// the deployment's approver decides.
const sessionlessProtocol = "2026-07-28"

// DefaultElicitTimeout is how long a client's user has to answer an
// approval when Options.ElicitTimeout is zero: long enough to read the
// question, short enough that a client that never answers does not hold a
// direct call (which has no wall time of its own) for ever.
const DefaultElicitTimeout = 5 * time.Minute

// elicitApprover asks the MCP client's user, through elicitation/create,
// whether a call a pre-execute listener asked about may run.
type elicitApprover struct {
	ss      *mcp.ServerSession
	timeout time.Duration
}

// callApprover returns the approver for the calls of one request: the
// client, when it declared the elicitation capability at initialisation on
// a protocol that lets the server ask during a call, else nil (the
// deployment's approver decides).
func callApprover(ss *mcp.ServerSession, timeout time.Duration) executor.Approver {
	if ss == nil {
		return nil
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil || ip.ProtocolVersion >= sessionlessProtocol {
		return nil
	}
	if e := ip.Capabilities.Elicitation; e.Form == nil && e.URL != nil {
		return nil // a client that takes URLs only cannot answer a form
	}
	return elicitApprover{ss, timeout}
}

// Approve asks the client. "accept" approves this one call; "decline" and
// "cancel" reject it, as does no answer within the timeout; a request that
// fails (the client is gone, it answered with an error) rejects it with the
// error.
func (a elicitApprover) Approve(ctx context.Context, req executor.Request, question string) (executor.Approval, string, error) {
	msg := fmt.Sprintf("Allow the call to %s?", req.Tool)
	meta := mcp.Meta{}
	if question != "" {
		meta[MetaReason] = question
	}
	if req.Nested {
		msg = fmt.Sprintf("Allow the call to %s from a run_code program?", req.Tool)
		meta[MetaLabels] = req.Labels
	}
	if question != "" {
		msg += " " + question
	}
	if req.Nested {
		msg += fmt.Sprintf("\nLabels: %s (what the program had read when it made the call)", req.Labels)
	}
	msg += "\nArguments: " + text.Truncate(string(req.Args), maxElicitArgs)
	if len(req.Args) > maxElicitArgs {
		msg += fmt.Sprintf(" … (%d bytes in all)", len(req.Args))
	}
	ectx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	params := &mcp.ElicitParams{
		Mode:            "form",
		Message:         msg,
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	}
	if len(meta) > 0 {
		params.Meta = meta
	}
	res, err := a.ss.Elicit(ectx, params)
	if err != nil && ctx.Err() == nil && errors.Is(ectx.Err(), context.DeadlineExceeded) {
		return executor.Reject, fmt.Sprintf("the MCP client's user did not answer within %s (mcpserver.Options.ElicitTimeout)", a.timeout), nil
	}
	if err != nil {
		return executor.Reject, "", fmt.Errorf("asking the MCP client for approval: %w", err)
	}
	switch res.Action {
	case "accept":
		return executor.ApproveOnce, "", nil
	case "decline":
		return executor.Reject, "the MCP client's user declined", nil
	case "cancel":
		return executor.Reject, "the MCP client's user dismissed the question", nil
	}
	return executor.Reject, fmt.Sprintf("the MCP client answered the approval with the unknown action %q", res.Action), nil
}
