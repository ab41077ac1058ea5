package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ptcx/ptcx/registry"
)

// cancelGrace is how long a cancelled or timed-out body is given to return
// before the call settles without it.
const cancelGrace = 100 * time.Millisecond

// dispatch is phase 7: run the body with the caller's context, under the
// tool's timeout, and return when the call has its outcome. A body that
// ignores its context is not waited for longer than cancelGrace past the
// timeout or the cancellation: the call settles, and the body's late result
// is dropped.
func (x *execution) dispatch(ctx context.Context) {
	done := make(chan struct{})
	x.launch(ctx, func() { close(done) })
	<-done
}

// outcome is what a body returned.
type outcome struct {
	out registry.Output
	err error
}

// launch is dispatch without the wait: it starts the body and calls then,
// exactly once and from whichever goroutine settles the call, when the
// outcome is recorded. The scheduler uses it so that the goroutine running a
// nested body also commits it, without a hand-off.
func (x *execution) launch(ctx context.Context, then func()) {
	if ctx.Err() != nil {
		x.fail(aborted(ctx, registry.CodeAbortedBeforeDispatch, "the call was cancelled before it was dispatched"))
		then()
		return
	}
	x.ran = true
	x.e.notifyStart(x)

	bodyCtx, cancel := ctx, context.CancelFunc(func() {})
	if t := x.def.Timeout(); t > 0 {
		bodyCtx, cancel = context.WithTimeout(ctx, t)
	}
	var (
		once  sync.Once
		mu    sync.Mutex  // guards grace
		grace *time.Timer // started when bodyCtx is done
		stop  = func() bool { return false }
	)
	settle := func(o outcome, late bool) {
		once.Do(func() {
			mu.Lock()
			if grace != nil {
				grace.Stop()
			}
			mu.Unlock()
			if late && o.err == nil {
				o.err = bodyCtx.Err()
			}
			x.conclude(ctx, bodyCtx, o)
			cancel()
			then()
		})
	}
	if !x.def.Transport() {
		// run_code stops promptly on cancellation and must settle its
		// nested calls before it returns, so it is always awaited; any
		// other body gets cancelGrace once its context is done.
		stop = context.AfterFunc(bodyCtx, func() {
			mu.Lock()
			defer mu.Unlock()
			grace = time.AfterFunc(cancelGrace, func() { settle(outcome{err: bodyCtx.Err()}, true) })
		})
	}
	go func() {
		var o outcome
		o.err = safely(func() (err error) { o.out, err = x.body(bodyCtx); return err })
		stop() // assigned before this goroutine started
		settle(o, bodyCtx.Err() != nil)
	}()
}

// conclude records a body's outcome as the call's result or error.
func (x *execution) conclude(ctx, bodyCtx context.Context, o outcome) {
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
