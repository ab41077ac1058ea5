package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ptcx/ptcx/registry"
)

// cancelGrace is how long a cancelled or timed-out body is given to return
// before the call settles without it.
const cancelGrace = 100 * time.Millisecond

// dispatch is phase 7: run the body with the caller's context, under the
// tool's timeout. A body that ignores its context is not waited for longer
// than cancelGrace past the timeout or the cancellation: the call settles,
// and the body's late result is dropped.
func (x *execution) dispatch(ctx context.Context) {
	if ctx.Err() != nil {
		x.fail(aborted(ctx, registry.CodeAbortedBeforeDispatch, "the call was cancelled before it was dispatched"))
		return
	}
	x.ran = true
	x.e.notifyStart(x)

	bodyCtx, cancel := ctx, context.CancelFunc(func() {})
	if t := x.def.Timeout(); t > 0 {
		bodyCtx, cancel = context.WithTimeout(ctx, t)
	}
	defer cancel()

	type outcome struct {
		out registry.Output
		err error
	}
	ch := make(chan outcome, 1)
	go func() {
		var o outcome
		o.err = safely(func() (err error) { o.out, err = x.body(bodyCtx); return err })
		ch <- o
	}()

	var o outcome
	if x.def.Transport() {
		// run_code stops promptly on cancellation and must settle its nested
		// calls before it returns: always wait for it.
		o = <-ch
	} else {
		select {
		case o = <-ch:
		case <-bodyCtx.Done():
			// A body that honours its context returns promptly: wait a
			// moment, so that a settled call has no body still running.
			grace := time.NewTimer(cancelGrace)
			select {
			case o = <-ch:
				if o.err == nil {
					o.err = bodyCtx.Err()
				}
			case <-grace.C:
				o.err = bodyCtx.Err()
			}
			grace.Stop()
		}
	}

	switch {
	case ctx.Err() != nil && registry.CodeOf(o.err) == registry.CodeCodeRunFailed:
		x.fail(bodyError(x.req.Tool, o.err)) // CODE_RUN_FAILED (abort), with the logs
	case ctx.Err() != nil:
		x.fail(aborted(ctx, registry.CodeAborted, fmt.Sprintf("%s was cancelled while it ran", x.req.Tool)))
	case o.err != nil && bodyCtx.Err() != nil && errors.Is(bodyCtx.Err(), context.DeadlineExceeded):
		x.fail(&registry.Error{Code: registry.CodeToolTimeout, Message: fmt.Sprintf("%s did not finish within its timeout of %v", x.req.Tool, x.def.Timeout()), Cause: o.err})
	case o.err != nil:
		x.fail(bodyError(x.req.Tool, o.err))
	default:
		x.out = o.out
		x.checkValue()
	}
}

// body runs the tool's body, or run_code's.
func (x *execution) body(ctx context.Context) (registry.Output, error) {
	if x.def.Transport() {
		return x.e.runCode(ctx, x)
	}
	return x.def.Body()(ctx, registry.Input{CallID: x.req.ID, Scope: x.req.Scope, Args: x.req.Args})
}

// checkValue makes sure the body's value is JSON.
func (x *execution) checkValue() {
	if len(x.out.Value) == 0 {
		x.out.Value = json.RawMessage("null")
		return
	}
	if !json.Valid(x.out.Value) {
		x.fail(registry.Errorf(registry.CodeInvalidToolOutput, "%s returned a value that is not valid JSON", x.req.Tool))
	}
}

// bodyError keeps a body's *registry.Error and turns anything else into
// TOOL_FAILED (or INTERNAL for a panic).
func bodyError(tool string, err error) *registry.Error {
	var re *registry.Error
	if errors.As(err, &re) {
		return re
	}
	var pe *PanicError
	if errors.As(err, &pe) {
		return internal(tool+" panicked", err)
	}
	return &registry.Error{Code: registry.CodeToolFailed, Message: err.Error(), Cause: err}
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
