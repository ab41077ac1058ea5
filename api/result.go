package api

import "encoding/json"

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
	// Ledger is set on the result of a run_code call that ran a program,
	// failed or not: the nested calls it made and its measurements.
	Ledger *Ledger
	// Labels is where the result's data came from (docs/security.md,
	// "Data flow"): a tool's result carries the tool's declared labels
	// joined with the label of the call that produced it; a run_code
	// result, its program's context label (everything delivered into the
	// program). An error carries the label its value would have. The zero
	// Label, {trusted, public}, when nothing declared any.
	Labels Label
	// Handles are the handles a run_code result holds, with their values
	// (Handle), which its Text shows as placeholders; Result.Handle
	// resolves one by its ID.
	Handles []Handle
}

// OK reports whether the call succeeded.
func (r Result) OK() bool { return r.Err == nil }

// AsError returns r.Err as an error, nil when the call succeeded (a nil
// *Error in an error would not be nil), for errors.Is and errors.As.
func (r Result) AsError() error {
	if r.Err == nil {
		return nil
	}
	return r.Err
}
