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
}

// PlanReason is one construct that makes a plan dynamic.
type PlanReason struct {
	Line int    `json:"line"`
	Why  string `json:"why"`
}
