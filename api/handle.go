package api

import "encoding/json"

// Handle is a value a program held by reference (docs/security.md,
// "Handles"): the result of a tool declared to return handles, or one over
// the host's handle size, kept by the host, never shown to the program's
// model. A run_code result that holds handles lists them
// (Result.Handles); the model is shown a placeholder for each in its text
// ({"$handle": {"id", "tool", "size", "labels"}}), never the value.
type Handle struct {
	// ID names the handle in placeholders and to the host (serve's
	// GET /v1/executions/{id}/handles/{handle}): random, unique to its
	// execution. It is not what the program holds: a program that writes
	// it gets no value.
	ID string `json:"id"`
	// Tool is the tool whose result it is.
	Tool string `json:"tool"`
	// Size is the length of Value in bytes.
	Size int `json:"size"`
	// Labels are the value's labels: what reading it would join into a
	// program's context.
	Labels Label `json:"labels"`
	// Value is the JSON the tool returned. It is never marshalled with
	// the handle: a host that shows a Result shows no value by mistake.
	Value json.RawMessage `json:"-"`
}

// Handle returns the handle of r named id, and whether r holds it.
func (r Result) Handle(id string) (Handle, bool) {
	for _, h := range r.Handles {
		if h.ID == id {
			return h, true
		}
	}
	return Handle{}, false
}
