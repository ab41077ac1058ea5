package protocol

// ApprovalsRequest is the body of POST /v1/executions/{id}/approvals.
type ApprovalsRequest struct {
	Decisions []Decision `json:"decisions"`
}

// Decision decides one pending approval (a PendingCall of Kind
// "approval"): approved, the call runs and the program continues where
// it stopped; declined, the program's promise rejects with DENIED and
// Reason.
type Decision struct {
	ID      string `json:"id"`
	Approve bool   `json:"approve"`
	Reason  string `json:"reason,omitempty"`
}
