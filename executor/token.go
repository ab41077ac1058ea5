package executor

import (
	"sync/atomic"

	"github.com/ptcx/ptcx/plan"
)

// token is the parent token of one run_code execution. It is minted by the
// executor, lives only in host memory (the guest never sees it; nothing
// serialises it), and dies when the execution settles. A call presenting a
// dead token, or a token of another executor, is treated as model-direct.
type token struct {
	exec   *Executor
	callID string // the run_code call's ID
	scope  string
	live   atomic.Bool
	seq    atomic.Int64 // nested call numbers, from 1
	ledger ledger       // the nested calls of the run, as they finish
	flow   flow         // the run's context label, counts and cost (flow.go)
	plan   *plan.Bound  // the approved plan the run is bound to, or nil (plan.go)
	// handles is the run's handle table (handles.go), made at its first
	// handle, or its session's (session_run.go); nil until then, so a run
	// without handles tests one pointer.
	handles atomic.Pointer[handleTable]
	session bool // the run is a session's program: its handles outlive it (handles.go)
	// resolved are the run's nested calls' last resolutions (resolved.go).
	resolved [resolvedSlots]atomic.Pointer[resolvedTool]
}

func (e *Executor) mintToken(callID, scope string) *token {
	t := &token{exec: e, callID: callID, scope: scope}
	t.live.Store(true)
	return t
}

// liveFor reports whether t is a live token minted by e. A nil token is
// model-direct.
func (t *token) liveFor(e *Executor) bool {
	return t != nil && t.exec == e && t.live.Load()
}

// kill makes the token worthless. It is called once the run_code execution
// has settled (program done, queued calls abandoned, in-flight calls awaited).
func (t *token) kill() { t.live.Store(false) }
