package api

import (
	"encoding/json"
	"fmt"
)

// Input is what a tool body receives.
type Input struct {
	CallID string
	Scope  string
	// Args are the call's arguments, already validated against the tool's
	// input schema.
	Args json.RawMessage
}

// Output is what a tool body returns on success.
type Output struct {
	// Value is the tool's result as JSON. Nil means JSON null.
	Value json.RawMessage
	// Text is what the model is shown. Empty means "render Value": a JSON
	// string is shown raw, anything else as indented JSON.
	Text string
	// Labels may raise the label of this one result above the tool's
	// declared labels (an email the tool knows came from outside); it is
	// joined with them, so it can never lower it.
	Labels Label
	// Ledger is run_code's alone: what the program did (see Ledger); the
	// executor ignores it on any other tool's output.
	Ledger *Ledger
	// Handles are run_code's alone: the handles its result holds (see
	// Result.Handles).
	Handles []Handle
}

// ValueOutput marshals v into an Output.
func ValueOutput(v any) (Output, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Output{}, fmt.Errorf("tool output is not JSON: %w", err)
	}
	return Output{Value: b}, nil
}
