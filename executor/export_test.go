package executor

import (
	"context"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// Token exposes parent tokens to the tests, which must prove that a stale or
// foreign one is worthless. Production code has no way to present one.
type Token = *token

// TokenOf returns the parent token behind a dispatcher handed to a runtime.
func TokenOf(d wasmhost.Dispatcher) Token { return d.(*scheduler).tok }

// ExecuteWithToken runs a call presenting tok, as a nested call would.
func (e *Executor) ExecuteWithToken(ctx context.Context, call Call, tok Token) api.Result {
	x := e.newExecution(call, tok)
	if x.prepare(ctx) {
		x.dispatch(ctx)
		x.postExecute(ctx)
	}
	return x.finish(ctx)
}

// Live reports whether tok is still live.
func (t *token) Live() bool { return t.live.Load() }

// SetSettlingHook installs f to run when a scheduler starts settling; the
// returned function removes it.
func SetSettlingHook(f func()) func() {
	testHookSettling = f
	return func() { testHookSettling = nil }
}

// SetInlineHook installs f to see every call a scheduler runs on the
// runtime's goroutine (inline.go); the returned function removes it.
func SetInlineHook(f func(Request)) func() {
	testHookInline = f
	return func() { testHookInline = nil }
}

// ArgsSummary is the ledger's summary of a call's arguments.
func ArgsSummary(args []byte) string { return argsSummary(args) }

// SessionFrame is what a session store's bytes carry beside the state
// (session_frame.go).
type SessionFrame struct {
	Label    api.Label
	Handles  []ParkedHandle
	Language api.Language
}

// UnframeSession exposes the session store frame's reader to its fuzz
// target; FrameSession its writer.
func UnframeSession(b []byte) (SessionFrame, []byte, error) {
	h, state, err := unframeSession(b)
	return SessionFrame{Label: h.label, Handles: h.handles, Language: h.lang}, state, err
}

func FrameSession(f SessionFrame, state []byte) []byte {
	return frameSession(sessionHead{label: f.Label, handles: f.Handles, lang: f.Language}, state)
}
