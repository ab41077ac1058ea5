package api

// Kind refines CODE_RUN_FAILED: why a run_code program did not settle
// normally. The strings are stable: models and hosts read them.
type Kind string

// The kinds of a failed run.
const (
	KindException     Kind = "exception"      // the program threw, or an awaited promise can never settle
	KindSyntax        Kind = "syntax"         // the program does not parse
	KindTimeout       Kind = "timeout"        // compute or wall time ran out
	KindMemory        Kind = "memory"         // the memory limit was reached
	KindOutputLimit   Kind = "output-limit"   // logs and result exceeded the output limit
	KindInvalidOutput Kind = "invalid-output" // the returned value is not JSON
	KindAbort         Kind = "abort"          // the caller's context was cancelled
	KindTrap          Kind = "trap"           // the guest trapped or broke the ABI
)
