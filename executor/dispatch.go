package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptcx/ptcx/api"
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
	out api.Output
	err error
}

// launch is dispatch without the wait: it starts the body and calls then,
// exactly once and from whichever goroutine settles the call, when the
// outcome is recorded. The scheduler uses it so that the goroutine running a
// nested body also commits it, without a hand-off.
func (x *execution) launch(ctx context.Context, then func()) {
	if !x.begin(ctx, then) {
		return
	}
	bodyCtx, settle, stop := x.watch(ctx, then, nil)
	go func() {
		o, ok := x.runBody(bodyCtx, func(o outcome) {
			stop()
			settle(o, false)
		})
		if ok {
			stop()
			settle(o, bodyCtx.Err() != nil)
		}
	}()
}

// runHere is launch on the calling goroutine: it returns once the body
// returned. If the body outlives its timeout or ctx by cancelGrace, the
// call settles without it (then runs on a timer's goroutine) and handover
// is called after then, while this goroutine stays stuck in the body.
func (x *execution) runHere(ctx context.Context, then, handover func()) {
	if !x.begin(ctx, then) {
		return
	}
	bodyCtx, settle, stop := x.watch(ctx, then, handover)
	o, ok := x.runBody(bodyCtx, func(o outcome) {
		// This goroutine is the run's, and it is ending: the run must go
		// on without it.
		stop()
		settle(o, false)
		if handover != nil {
			handover()
		}
	})
	if ok {
		stop()
		settle(o, bodyCtx.Err() != nil)
	}
}

// begin marks the body started, or settles a call cancelled before it
// started and reports false.
func (x *execution) begin(ctx context.Context, then func()) bool {
	if ctx.Err() != nil {
		x.fail(aborted(ctx, api.CodeAbortedBeforeDispatch, "the call was cancelled before it was dispatched"))
		then()
		return false
	}
	x.ran = true
	x.e.notifyStart(x)
	return true
}

// runBody runs the body, turning a panic into an error, and reports
// whether it returned. A body that calls runtime.Goexit (t.FailNow in a
// test's tool does) ends the goroutine instead: the deferred calls still
// run, so exited is called with an INTERNAL outcome as it unwinds, and
// runBody never returns.
func (x *execution) runBody(ctx context.Context, exited func(outcome)) (o outcome, returned bool) {
	defer func() {
		if !returned {
			exited(outcome{err: internal(x.req.Tool+" ended its goroutine (runtime.Goexit) instead of returning", nil)})
		}
	}()
	o.err = safely(func() (err error) { o.out, err = x.body(ctx); return err })
	return o, true
}

// watch sets up the body's context (ctx under the tool's timeout) and
// returns settle, which records an outcome and calls then, once: from the
// body's goroutine when the body returns, or from a timer cancelGrace after
// bodyCtx is done, whichever comes first (late is true when bodyCtx was
// done; settle reports whether it was first). After a settlement by the
// timer, lost is called. stop must be called when the body has returned,
// before settle.
func (x *execution) watch(ctx context.Context, then, lost func()) (bodyCtx context.Context, settle func(o outcome, late bool) bool, stop func() bool) {
	bodyCtx, cancel := ctx, context.CancelFunc(func() {})
	if t := x.def.Timeout(); t > 0 {
		bodyCtx, cancel = context.WithTimeout(ctx, t)
	}
	var (
		settled atomic.Bool
		mu      sync.Mutex  // guards grace
		grace   *time.Timer // started when bodyCtx is done
	)
	settle = func(o outcome, late bool) bool {
		if settled.Swap(true) {
			return false
		}
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
		return true
	}
	stop = func() bool { return false }
	if !x.def.Transport() {
		// run_code stops promptly on cancellation and must settle its
		// nested calls before it returns, so it is always awaited; any
		// other body gets cancelGrace once its context is done.
		stop = context.AfterFunc(bodyCtx, func() {
			mu.Lock()
			defer mu.Unlock()
			grace = time.AfterFunc(cancelGrace, func() {
				if settle(outcome{err: bodyCtx.Err()}, true) && lost != nil {
					lost()
				}
			})
		})
	}
	return bodyCtx, settle, stop
}

// conclude records a body's outcome as the call's result or error.
func (x *execution) conclude(ctx, bodyCtx context.Context, o outcome) {
	switch {
	case ctx.Err() != nil && api.CodeOf(o.err) == api.CodeCodeRunFailed:
		x.fail(bodyError(x.req.Tool, o.err)) // CODE_RUN_FAILED (abort), with the logs
	case ctx.Err() != nil && x.def.Transport():
		// The run ended some other way (even successfully) as its caller
		// cancelled it: a cancelled run_code is CODE_RUN_FAILED (abort),
		// never ABORTED, whichever came first.
		x.fail(abortedRun(ctx, o))
	case ctx.Err() != nil && x.req.Nested && errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		x.fail(aborted(ctx, api.CodeAborted, fmt.Sprintf("%s was stopped while it ran: the program reached its wall time limit", x.req.Tool)))
	case ctx.Err() != nil:
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

// body runs the tool's body, or run_code's.
func (x *execution) body(ctx context.Context) (api.Output, error) {
	if x.def.Transport() {
		return x.e.runCode(ctx, x)
	}
	return x.def.Body()(ctx, api.Input{CallID: x.req.ID, Scope: x.req.Scope, Args: x.req.Args})
}

// checkValue makes sure the body's value is JSON.
func (x *execution) checkValue() {
	if len(x.out.Value) == 0 {
		x.out.Value = json.RawMessage("null")
		return
	}
	if !json.Valid(x.out.Value) {
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
