package wasmhost

import "context"

// logHookKey carries a LogHook in a context.
type logHookKey struct{}

// LogHook sees each console line of a run as the program writes it (the
// level's prefix, such as "[warn] ", included), before the output limit is
// applied: the run's Outcome.Logs stays the authority on what was kept. It
// is called on the run's goroutine while the run holds its lock, so it must
// return at once (hand the line to a buffered channel, drop it when full)
// and must not call back into the run.
type LogHook func(line string)

// WithLogHook returns a copy of ctx under which a Run calls h for every
// console line. The executor passes a run_code call's context to Run, so a
// host sets it on the context of the call (mcpserver streams the lines as
// MCP progress notifications). A nil h is no hook.
func WithLogHook(ctx context.Context, h LogHook) context.Context {
	return context.WithValue(ctx, logHookKey{}, h)
}

// logHookOf is the hook set on ctx, or nil.
func logHookOf(ctx context.Context) LogHook {
	h, _ := ctx.Value(logHookKey{}).(LogHook)
	return h
}
