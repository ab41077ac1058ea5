package api

import (
	"context"
	"errors"
	"fmt"
)

// Error is the one error type of ptcx. Its Message is written for the model
// and the user and never repeats the Code or the Kind (Error and Prefix put
// them in front); Cause keeps the host-side error (never shown to a
// program).
type Error struct {
	Code Code
	// Kind refines CODE_RUN_FAILED (see Kind); empty for every other code.
	Kind Kind
	// Message says what went wrong and, where there is one, what to do.
	Message string
	// Violations lists every schema violation of an INVALID_ARGS or
	// INVALID_TOOL_OUTPUT error, one "at /path: problem" line each.
	Violations []string
	// Location is where in the TypeScript, as the caller wrote it, a
	// CODE_RUN_FAILED (syntax) error is, when it is known.
	Location *Location
	// Stack is the JavaScript stack of a CODE_RUN_FAILED (exception) error,
	// its positions mapped back to the TypeScript as written; empty when the
	// guest gave none.
	Stack string
	// Logs are the console lines a failed run_code program wrote before it
	// failed (CODE_RUN_FAILED only).
	Logs []string
	// Ledger is what a failed run_code program did before it failed: the
	// nested calls it made and its measurements (CODE_RUN_FAILED only).
	Ledger *Ledger
	// Policy is the flow a DENIED call was refused for, when a data flow
	// rule of the tool refused it (labels, constraints, calls_per_run,
	// max_cost, needs_approval not approved: docs/security.md, "Data
	// flow"); nil otherwise.
	Policy *PolicyViolation
	// Cause is the underlying error, if any.
	Cause error
}

// Location is a position in a program's source.
type Location struct {
	// Line and Column are 1-based; Column counts bytes.
	Line   int `json:"line"`
	Column int `json:"column"`
	// LineText is the line, or for a very long one the part of it around
	// Column, with "…" where it was cut. Empty when unknown.
	LineText string `json:"line_text,omitempty"`
}

// Errorf returns an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Prefix returns "CODE", or "CODE (kind)" when the error has a kind: what
// a model reads in front of the message of a failed call.
func (e *Error) Prefix() string {
	if e.Kind == "" {
		return string(e.Code)
	}
	return string(e.Code) + " (" + string(e.Kind) + ")"
}

// Error returns "CODE: message" ("CODE (kind): message" with a kind).
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Prefix()
	}
	return e.Prefix() + ": " + e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Is matches a sentinel with the same Code, or an *Error with the same Code
// and the same Kind when the target has one. TOOL_TIMEOUT also matches
// context.DeadlineExceeded; ABORTED, ABORTED_BEFORE_DISPATCH and
// CODE_RUN_FAILED (abort) also match context.Canceled.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case sentinel:
		return Code(t) == e.Code
	case *Error:
		return t != nil && t.Code == e.Code && (t.Kind == "" || t.Kind == e.Kind)
	}
	switch target {
	case context.DeadlineExceeded:
		return e.Code == CodeToolTimeout
	case context.Canceled:
		return e.Code == CodeAborted || e.Code == CodeAbortedBeforeDispatch ||
			(e.Code == CodeCodeRunFailed && e.Kind == KindAbort)
	}
	return false
}

// CodeOf returns the Code of err if it is (or wraps) an *Error or a
// sentinel, and CodeInternal otherwise.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var s sentinel
	if errors.As(err, &s) {
		return Code(s)
	}
	return CodeInternal
}
