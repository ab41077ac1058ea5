package protocol

import "encoding/json"

// Event is one Server-Sent Event of an execution (GET
// /v1/executions/{id}/events): `id: <ID>`, `event: <Type>`, `data: <Data>`.
type Event struct {
	ID   int             `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// Event types.
const (
	EventCallStarted  = "call_started"
	EventCallFinished = "call_finished"
	EventPending      = "pending"
	// EventApprovalPending: a call waits for a decision (its data is the
	// PendingCall, kind "approval", with expires_at).
	EventApprovalPending = "approval_pending"
	EventResult          = "result_received"
	EventExpired         = "expired"
	EventLog             = "log"
	EventDone            = "done"
)
