package protocol

// PlanRequest is the body of POST /v1/plans: a program, read without
// running it against the tools an execution of it with the same scope and
// client tools would have. The answer is an api.Plan.
type PlanRequest struct {
	Code        string       `json:"code"`
	Scope       string       `json:"scope,omitempty"`
	ClientTools []ClientTool `json:"client_tools,omitempty"`
}
