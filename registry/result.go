package registry

import (
	"encoding/json"
	"fmt"
)

// Output is what a tool body returns on success.
type Output struct {
	// Value is the tool's result as JSON. Nil means JSON null.
	Value json.RawMessage
	// Text is what the model is shown. Empty means "render Value": a JSON
	// string is shown raw, anything else as indented JSON.
	Text string
}

// ValueOutput marshals v into an Output.
func ValueOutput(v any) (Output, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Output{}, fmt.Errorf("tool output is not JSON: %w", err)
	}
	return Output{Value: b}, nil
}

// Result is the settled outcome of one call. It is a value: the executor
// hands out copies and never changes a Result after it was published.
type Result struct {
	// ID identifies the call (nested calls: "<outer>:ptc:<n>").
	ID string
	// Tool is the name the caller used.
	Tool string
	// Value is the final value (nil when Err is set).
	Value json.RawMessage
	// Text is what the model is shown: the rendered value, or the error
	// message.
	Text string
	// Err is set when the call failed.
	Err *Error
}

// OK reports whether the call succeeded.
func (r Result) OK() bool { return r.Err == nil }

// Error returns r.Err as an error (nil when OK), for errors.Is/As.
func (r Result) Error() error {
	if r.Err == nil {
		return nil
	}
	return r.Err
}
