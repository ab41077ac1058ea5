package api

import "encoding/json"

// Plan is what a program can do, read without running it. Its JSON form is
// the document a person approves (docs/embedding.md, "Plans"); package plan
// reads it from a program and binds runs to it.
type Plan struct {
	// Hash is the SHA-256, in hex, of the program text as it was sent.
	Hash string `json:"hash"`
	// Dynamic is true when the program reaches the tools object in a way
	// the reader cannot follow: it may then call any tool in Tools.
	Dynamic bool `json:"dynamic"`
	// Tools is the set of tools the program can call, sorted: those of its
	// call sites, or every visible tool when Dynamic.
	Tools []string `json:"tools"`
	// Calls are the call sites, in the order of the program's text.
	Calls []PlanCall `json:"calls"`
	// Reasons say why the plan is dynamic, one per construct, at most
	// 16 of them.
	Reasons []PlanReason `json:"reasons,omitempty"`
	// Labels is the most the program's data can carry from its tools: the
	// join of the declared labels of every tool in Tools (the highest for
	// one whose declaration is unknown). Absent when the plan was read
	// without the tools' declarations.
	Labels *Label `json:"labels,omitempty"`
	// Rules are, by tool, the rules of its declaration that its calls can
	// meet, for every tool in Tools whose declaration is known (once per
	// tool: a declaration can be large, a program can have many sites).
	// Absent when the plan was read without the tools' declarations. A
	// run bound to the plan ignores Rules, Labels, Cost and each call's
	// Labels, MayDeny and MayAsk in the approved document: it reads them
	// again from the program and the tools.
	Rules map[string]PlanRules `json:"rules,omitempty"`
	// Cost is an upper bound of what the program's nested calls cost (the
	// sum of its call sites' declared costs), given only when it is
	// bounded: the plan is not dynamic, no site of a tool with a cost
	// repeats, and every site's tool declaration is known. Absent
	// otherwise.
	Cost *int64 `json:"cost,omitempty"`
}

// PlanCall is one call site of a tool.
type PlanCall struct {
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Args are the members of the arguments whose values are JSON
	// literals, with those values.
	Args map[string]json.RawMessage `json:"args"`
	// Computed are the other members' names, sorted; "..." when the
	// arguments are not an object literal, or carry a spread or a computed
	// key, so that members the reader cannot name may be present.
	Computed []string `json:"computed"`
	// Repeats is true when the site can run more than once: it is inside a
	// loop, a callback or a function.
	Repeats bool `json:"repeats"`
	// Line is the site's 1-based line in the program text as sent.
	Line int `json:"line"`
	// Labels is the most the call can carry (the program's context label
	// when it is made: docs/security.md, "Data flow"), from the tools'
	// declared labels: the join of the labels of every other site's tool,
	// and of its own when it repeats (of every tool the program can call
	// when the plan is dynamic). A tool whose declaration is unknown counts
	// as the highest label. A body that raises one result's label
	// (api.Output.Labels) can go past it: a plan-bound run then puts such
	// a call to the approver as if no plan covered it. Absent when the
	// plan was read without the tools' declarations.
	Labels *Label `json:"labels,omitempty"`
	// MayDeny is true when, under Labels, what the tool accepts refuses
	// the call (on_violation deny); MayAsk, when it puts the call to the
	// approver instead (on_violation ask). An unknown declaration may do
	// either. Neither counts the tool's other rules (constraints,
	// calls_per_run, max_cost, needs_approval), which Plan.Rules lists.
	MayDeny bool `json:"may_deny,omitempty"`
	MayAsk  bool `json:"may_ask,omitempty"`
}

// PlanRules are the rules of a tool's data-flow declaration
// (policy.Declaration) that a call of it can meet, as a plan shows them.
type PlanRules struct {
	// Labels are the labels every result of the tool carries at least.
	Labels *Label `json:"labels,omitempty"`
	// Accepts is the most the whole call may carry; AcceptsArgs, the most
	// each named argument may carry; OnViolation, "deny" or "ask", what
	// happens past them.
	Accepts     *Label           `json:"accepts,omitempty"`
	AcceptsArgs map[string]Label `json:"accepts_args,omitempty"`
	OnViolation string           `json:"on_violation,omitempty"`
	// NeedsApproval puts every call to the approver (not a call the run's
	// approved plan covers).
	NeedsApproval bool `json:"needs_approval,omitempty"`
	// Constraints are CEL conditions over the arguments, each of which
	// must hold.
	Constraints []string `json:"constraints,omitempty"`
	// CallsPerRun, when positive, is the most calls of the tool one run
	// may make.
	CallsPerRun int `json:"calls_per_run,omitempty"`
	// Cost is what one call costs; MaxCost, when positive, the most the
	// run may have spent, this call included, for a call to proceed.
	Cost    int64 `json:"cost,omitempty"`
	MaxCost int64 `json:"max_cost,omitempty"`
}

// PlanReason is one construct that makes a plan dynamic.
type PlanReason struct {
	Line int    `json:"line"`
	Why  string `json:"why"`
}
