package mcpserver

import (
	"context"
	"fmt"

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

// elicitApprover asks the MCP client's user, through elicitation/create,
// whether a call a pre-execute listener asked about may run.
type elicitApprover struct{ ss *mcp.ServerSession }

// callApprover returns the approver for the calls of one request: the
// client, when it declared the elicitation capability at initialisation on
// a protocol that lets the server ask during a call, else nil (the
// deployment's approver decides).
func callApprover(ss *mcp.ServerSession) executor.Approver {
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
	return elicitApprover{ss}
}

// Approve asks the client. "accept" approves this one call; "decline" and
// "cancel" reject it; a request that fails (the client is gone, it answered
// with an error) rejects it with the error.
func (a elicitApprover) Approve(ctx context.Context, req executor.Request, question string) (executor.Approval, string, error) {
	msg := fmt.Sprintf("Allow the call to %s?", req.Tool)
	if req.Nested {
		msg = fmt.Sprintf("Allow the call to %s from a run_code program?", req.Tool)
	}
	if question != "" {
		msg += " " + question
	}
	msg += "\nArguments: " + text.Truncate(string(req.Args), maxElicitArgs)
	if len(req.Args) > maxElicitArgs {
		msg += fmt.Sprintf(" … (%d bytes in all)", len(req.Args))
	}
	res, err := a.ss.Elicit(ctx, &mcp.ElicitParams{
		Mode:            "form",
		Message:         msg,
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	})
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
