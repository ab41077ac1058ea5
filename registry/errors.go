package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Code is a stable error code. Hosts and models read these strings; they never
// change meaning.
type Code string

// The error codes. docs/architecture.md ("One execution") says which phase
// gives each; BUSY is admission control's.
const (
	CodeUnknownTool           Code = "UNKNOWN_TOOL"
	CodeInvalidArgs           Code = "INVALID_ARGS"
	CodeInvalidToolOutput     Code = "INVALID_TOOL_OUTPUT"
	CodeUnsupportedSchema     Code = "UNSUPPORTED_SCHEMA"
	CodeDenied                Code = "DENIED"
	CodeAborted               Code = "ABORTED"
	CodeAbortedBeforeDispatch Code = "ABORTED_BEFORE_DISPATCH"
	CodeToolTimeout           Code = "TOOL_TIMEOUT"
	CodeCodeRunFailed         Code = "CODE_RUN_FAILED"
	// CodeToolFailed is a tool body that returned an ordinary error: the
	// tool ran and failed (a command exited non-zero, a file was missing).
	CodeToolFailed Code = "TOOL_FAILED"
	CodeInternal   Code = "INTERNAL"
	// CodeInvalidDefinition reports a tool, scope or restriction that cannot
	// be registered (bad name, duplicate, reserved name, second mode, ...).
	CodeInvalidDefinition Code = "INVALID_DEFINITION"
	// CodeBusy is retryable: the executor is at capacity; retry later.
	// Nothing ran, so the same call may be sent again as it is.
	CodeBusy Code = "BUSY"
)

// Sentinels for errors.Is. An *Error matches the sentinel with its Code; a
// sentinel never carries a message.
var (
	ErrUnknownTool           = &Error{Code: CodeUnknownTool}
	ErrInvalidArgs           = &Error{Code: CodeInvalidArgs}
	ErrInvalidToolOutput     = &Error{Code: CodeInvalidToolOutput}
	ErrUnsupportedSchema     = &Error{Code: CodeUnsupportedSchema}
	ErrDenied                = &Error{Code: CodeDenied}
	ErrAborted               = &Error{Code: CodeAborted}
	ErrAbortedBeforeDispatch = &Error{Code: CodeAbortedBeforeDispatch}
	ErrToolTimeout           = &Error{Code: CodeToolTimeout}
	ErrCodeRunFailed         = &Error{Code: CodeCodeRunFailed}
	ErrToolFailed            = &Error{Code: CodeToolFailed}
	ErrInternal              = &Error{Code: CodeInternal}
	ErrInvalidDefinition     = &Error{Code: CodeInvalidDefinition}
	ErrBusy                  = &Error{Code: CodeBusy}
)

// Error is the one error type of ptcx. Its Message is written for the model
// and the user; Cause keeps the host-side error (never shown to a program).
type Error struct {
	Code Code
	// Kind refines CODE_RUN_FAILED: exception, syntax, timeout, memory,
	// output-limit, invalid-output, abort or trap.
	Kind string
	// Message says what went wrong and, where there is one, what to do.
	Message string
	// Violations lists every schema violation of an INVALID_ARGS or
	// INVALID_TOOL_OUTPUT error, one "at /path: problem" line each.
	Violations []string
	// Logs are the console lines a failed run_code program wrote before it
	// failed (CODE_RUN_FAILED only).
	Logs []string
	// Cause is the underlying error, if any.
	Cause error
}

// Errorf returns an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error returns "CODE: message" ("CODE (kind): message" with a kind).
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Code))
	if e.Kind != "" {
		b.WriteString(" (")
		b.WriteString(e.Kind)
		b.WriteString(")")
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Is matches a sentinel (or any *Error) with the same Code, and the same Kind
// when the target has one. TOOL_TIMEOUT also matches
// context.DeadlineExceeded; ABORTED, ABORTED_BEFORE_DISPATCH and
// CODE_RUN_FAILED (abort) also match context.Canceled.
func (e *Error) Is(target error) bool {
	switch target {
	case context.DeadlineExceeded:
		return e.Code == CodeToolTimeout
	case context.Canceled:
		return e.Code == CodeAborted || e.Code == CodeAbortedBeforeDispatch ||
			(e.Code == CodeCodeRunFailed && e.Kind == "abort")
	}
	var t *Error
	if !errors.As(target, &t) || t == nil {
		return false
	}
	return t.Code == e.Code && (t.Kind == "" || t.Kind == e.Kind)
}

// CodeOf returns the Code of err if it is (or wraps) an *Error, and
// CodeInternal otherwise.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}
