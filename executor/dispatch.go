package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/resolve"
)

// dispatch is phase 7: run the body (body.go) with the caller's context
// under the tool's timeout, and return when the call has its outcome. A
// body that ignores its context is not waited for longer than cancelGrace
// past the timeout or the cancellation: the call settles, and the body's
// late result is dropped.
func (x *execution) dispatch(ctx context.Context) { x.dispatchWatched(ctx, nil) }

// dispatchWatched is dispatch with w, when not nil, the shared watch of
// ctx (watch.go).
func (x *execution) dispatchWatched(ctx context.Context, w *watch) {
	if x.def.Transport() {
		// run_code's own body is never settled without it (body.go), so
		// it runs on the calling goroutine, sparing two hand-offs.
		if b := x.startBody(ctx, noSettler{}, nil, nil); b != nil {
			b.run()
		}
		return
	}
	done := make(doneSettler)
	x.launch(ctx, done, w)
	<-done
}

// launch is dispatch without the wait: it starts the body on a goroutine of
// its own and tells then, exactly once and from whichever goroutine settles
// the call, when the outcome is recorded. The scheduler uses it so that the
// goroutine running a nested body also commits it, without a hand-off.
func (x *execution) launch(ctx context.Context, then settler, w *watch) {
	if b := x.startBody(ctx, then, nil, w); b != nil {
		go b.run()
	}
}

// outcome is what a body returned.
type outcome struct {
	out api.Output
	err error
}

// conclude records a body's outcome as the call's result or error.
func (x *execution) conclude(ctx, bodyCtx context.Context, o outcome) {
	cancelled := ctx.Err() != nil // one read: a context's Err may walk its parents
	switch {
	case cancelled && api.CodeOf(o.err) == api.CodeCodeRunFailed:
		x.fail(bodyError(x.req.Tool, o.err)) // CODE_RUN_FAILED (abort), with the logs
	case cancelled && x.def.Transport():
		// The run ended some other way (even successfully) as its caller
		// cancelled it: a cancelled run_code is CODE_RUN_FAILED (abort),
		// never ABORTED, whichever came first.
		x.fail(abortedRun(ctx, o))
	case cancelled && x.req.Nested && errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		x.fail(aborted(ctx, api.CodeAborted, fmt.Sprintf("%s was stopped while it ran: the program reached its wall time limit", x.req.Tool)))
	case cancelled:
		x.fail(aborted(ctx, api.CodeAborted, fmt.Sprintf("%s was cancelled while it ran", x.req.Tool)))
	case o.err != nil && bodyCtx.Err() != nil && errors.Is(bodyCtx.Err(), context.DeadlineExceeded):
		x.fail(&api.Error{Code: api.CodeToolTimeout, Message: fmt.Sprintf("%s did not finish within its timeout of %v", x.req.Tool, x.def.Timeout()), Cause: o.err})
	case o.err != nil:
		x.fail(bodyError(x.req.Tool, o.err))
	default:
		x.out = o.out
		x.checkValue()
	}
}

// callBody runs the tool's body, or run_code's.
func (x *execution) callBody(ctx context.Context) (api.Output, error) {
	if x.def.Transport() {
		return x.e.runCode(ctx, x)
	}
	if a, ok := takeParkedAnswer(x); ok { // a parked call's answer (park.go)
		return a.Output, a.Err
	}
	return x.def.Body()(ctx, api.Input{CallID: x.req.ID, Scope: x.req.Scope, Args: x.req.Args})
}

// checkValue makes sure the body's value is JSON.
func (x *execution) checkValue() {
	if len(x.out.Value) == 0 {
		x.out.Value = json.RawMessage("null")
		return
	}
	if !resolve.ValidJSON(x.out.Value) {
		x.fail(api.Errorf(api.CodeInvalidToolOutput, "%s returned a value that is not valid JSON", x.req.Tool))
	}
}

// bodyError keeps a body's *api.Error and turns anything else into
// TOOL_FAILED (or INTERNAL for a panic).
func bodyError(tool string, err error) *api.Error {
	var re *api.Error
	if errors.As(err, &re) {
		return re
	}
	var pe *PanicError
	if errors.As(err, &pe) {
		return internal(tool+" panicked", err)
	}
	return &api.Error{Code: api.CodeToolFailed, Message: err.Error(), Cause: err}
}

func (e *Executor) notifyStart(x *execution) {
	if len(e.cfg.onStart) == 0 {
		return
	}
	s := Start{Request: x.req, At: time.Now()}
	for _, f := range e.cfg.onStart {
		_ = safely(func() error { f(s); return nil })
	}
}
