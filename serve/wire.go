package serve

import "github.com/ptcx/ptcx/serve/protocol"

// The wire's types and names are serve/protocol's, which a client imports
// without linking the server; serve names them too, so that code written
// against serve's names compiles.
type (
	ExecutionRequest   = protocol.ExecutionRequest
	RunLimits          = protocol.RunLimits
	ClientTool         = protocol.ClientTool
	ExecutionState     = protocol.ExecutionState
	Stats              = protocol.Stats
	CallRecord         = protocol.CallRecord
	PendingCall        = protocol.PendingCall
	ToolResultsRequest = protocol.ToolResultsRequest
	ToolResult         = protocol.ToolResult
	ToolResultError    = protocol.ToolResultError
	ApprovalsRequest   = protocol.ApprovalsRequest
	Decision           = protocol.Decision
	CallRequest        = protocol.CallRequest
	CallResponse       = protocol.CallResponse
	ErrorBody          = protocol.ErrorBody
	ErrorEnvelope      = protocol.ErrorEnvelope
	Event              = protocol.Event
)

// Kinds of pending call (PendingCall.Kind).
const (
	KindTool     = protocol.KindTool
	KindApproval = protocol.KindApproval
)

// Statuses of an execution.
const (
	StatusRunning   = protocol.StatusRunning
	StatusPending   = protocol.StatusPending
	StatusCompleted = protocol.StatusCompleted
	StatusFailed    = protocol.StatusFailed
)

// Event types.
const (
	EventCallStarted     = protocol.EventCallStarted
	EventCallFinished    = protocol.EventCallFinished
	EventPending         = protocol.EventPending
	EventApprovalPending = protocol.EventApprovalPending
	EventResult          = protocol.EventResult
	EventExpired         = protocol.EventExpired
	EventLog             = protocol.EventLog
	EventDone            = protocol.EventDone
)
