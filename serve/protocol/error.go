package protocol

import "github.com/ptcx/ptcx/api"

// ErrorBody is the error of the envelope {"error": {...}}, of a failed
// execution and of a failed call.
type ErrorBody struct {
	Code       string        `json:"code"`
	Kind       api.Kind      `json:"kind,omitempty"`
	Message    string        `json:"message"`
	Reason     string        `json:"reason,omitempty"`
	Violations []string      `json:"violations,omitempty"`
	Location   *api.Location `json:"location,omitempty"`
	Stack      string        `json:"stack,omitempty"`
	// Policy is the flow a data-flow rule refused a call for (DENIED):
	// the rule, the tool, the argument, the label and its sources.
	Policy *api.PolicyViolation `json:"policy,omitempty"`
}

// ErrorEnvelope is the body of every non-2xx answer.
type ErrorEnvelope struct {
	Error ErrorBody `json:"error"`
}
