package ptcx

import (
	"context"

	"github.com/ptcx/ptcx/executor"
)

// SessionLimits bound run_code sessions (executor.SessionLimits; zero
// fields mean the defaults).
type SessionLimits = executor.SessionLimits

// WithSessions lets run_code calls share program state: calls of one scope
// that name one session (Call.Session) run their programs in it, as the
// programs of a REPL, within limits l (zero fields: the defaults,
// executor.SessionLimits). run_code's description and Host.Prompt then
// say that state persists (executor.SessionPrompt), so name a session on
// every run_code call of a conversation, and close it when the
// conversation ends (Host.CloseSession). It is applied after WithExecutor.
func WithSessions(l SessionLimits) Option {
	return func(o *options) { o.sessions = &l }
}

// CloseSession closes the run_code session name of scope (empty: the
// deployment), dropping its state (executor.Executor.CloseSession). It
// reports whether there was one, and, with a session store, the store's
// error when its copy could not be deleted (which a later CloseSession
// retries).
func (h *Host) CloseSession(ctx context.Context, scope, name string) (had bool, err error) {
	return h.exec.CloseSession(ctx, scope, name)
}
