package api

// Code is a stable error code. Hosts and models read these strings; they never
// change meaning.
type Code string

// The error codes. TOOL_FAILED, INVALID_DEFINITION and BUSY are explained
// beside them; the rest are decisions of the execution pipeline
// (docs/architecture.md, "One execution").
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
	// CodeNodeLost is retryable: the ptcx serve node running the execution
	// stopped (its lease in the cluster's store expired) before it settled,
	// and its program state was not saved; running it again may succeed.
	CodeNodeLost Code = "NODE_LOST"
)
