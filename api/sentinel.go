package api

// sentinel is the type of the Err* constants: a Code that is an error. It
// is unexported and the sentinels are constants, so no importer can change
// one or make another; an *Error matches the sentinel of its Code (Is).
type sentinel Code

// Error returns the code.
func (s sentinel) Error() string { return string(s) }

// Sentinels for errors.Is, one per Code. A sentinel carries no message.
const (
	ErrUnknownTool           sentinel = sentinel(CodeUnknownTool)
	ErrInvalidArgs           sentinel = sentinel(CodeInvalidArgs)
	ErrInvalidToolOutput     sentinel = sentinel(CodeInvalidToolOutput)
	ErrUnsupportedSchema     sentinel = sentinel(CodeUnsupportedSchema)
	ErrDenied                sentinel = sentinel(CodeDenied)
	ErrAborted               sentinel = sentinel(CodeAborted)
	ErrAbortedBeforeDispatch sentinel = sentinel(CodeAbortedBeforeDispatch)
	ErrToolTimeout           sentinel = sentinel(CodeToolTimeout)
	ErrCodeRunFailed         sentinel = sentinel(CodeCodeRunFailed)
	ErrToolFailed            sentinel = sentinel(CodeToolFailed)
	ErrInternal              sentinel = sentinel(CodeInternal)
	ErrInvalidDefinition     sentinel = sentinel(CodeInvalidDefinition)
	ErrBusy                  sentinel = sentinel(CodeBusy)
)
