package wasmhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	wapi "github.com/tetratelabs/wazero/api"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
)

// Calls into the guest's exports, on the guest's goroutine.

// errDeadline is the cause of a timeout: it matches context.DeadlineExceeded.
var errDeadline = fmt.Errorf("wasmhost: %w", context.DeadlineExceeded)

// instantiate creates the run's instance. Its time counts toward the wall
// limit only.
func (r *run) instantiate() *RunError {
	if r.prog.Session != nil {
		return r.sessionInstance()
	}
	if e := r.begin(false); e != nil {
		return e
	}
	inst, err := r.rt.newInstance(r.ctx, r.limits.MemoryBytes, r.rt.worldFor(r), r.prog.Tenant)
	r.end()
	if err != nil {
		if e := r.failure(); e != nil {
			return e
		}
		if r.guestErr != nil {
			return r.guestErr
		}
		return trapError(err, false)
	}
	r.inst = inst
	r.memory.Store(int64(inst.mem.Size()))
	return nil
}

// startProgram passes the program to ptcx_start.
func (r *run) startProgram() (int32, *RunError) {
	code := r.prog.JS
	staged, e := false, (*RunError)(nil)
	if r.prog.Session == nil { // a session's program is compiled in its session's scope
		staged, e = r.stage()
	}
	if e != nil {
		return 0, e
	}
	if staged {
		code = "" // ptcx_start runs the staged function
	}
	var cfg bytes.Buffer
	enc := json.NewEncoder(&cfg)
	enc.SetEscapeHTML(false)
	err := enc.Encode(abi.GuestConfig{
		Code:            code,
		Tools:           r.prog.Tools,
		Catalog:         r.prog.Catalog,
		MemoryLimit:     abi.EngineMemoryLimit(r.limits.MemoryBytes),
		MemoryBytes:     r.limits.MemoryBytes,
		MaxPendingCalls: r.limits.MaxPendingCalls,
		MaxCalls:        r.limits.MaxCalls,
		MaxTimers:       abi.MaxTimers,
		Session:         r.prog.Session != nil,
		LexicalTools:    r.prog.LexicalTools,
	})
	if err != nil {
		return 0, &RunError{Kind: api.KindTrap, Message: "the program could not be passed to the guest", Cause: err}
	}
	ptr, e := r.write(cfg.Bytes())
	if e != nil {
		return 0, e
	}
	st := &r.inst.stack
	st[0], st[1] = uint64(ptr), uint64(cfg.Len())
	return r.call(r.inst.start)
}

// write copies b into the guest's exchange buffer.
func (r *run) write(b []byte) (uint32, *RunError) {
	if uint64(len(b)) < uint64(r.inst.bufCap) {
		// It fits: no export runs, so there is nothing to time.
		ptr, err := r.inst.write(r.ctx, b)
		if err != nil {
			return 0, trapError(err, false)
		}
		return ptr, nil
	}
	if e := r.begin(true); e != nil {
		return 0, e
	}
	ptr, err := r.inst.write(r.ctx, b)
	r.end()
	switch {
	case errors.Is(err, errBufferFull):
		return 0, &RunError{Kind: api.KindMemory, Cause: err, Message: fmt.Sprintf(
			"out of memory: %d bytes for the guest do not fit its memory limit of %d bytes", len(b), r.limits.MemoryBytes)}
	case err != nil:
		return 0, r.classify(err)
	}
	return ptr, nil
}

// call runs one export with the parameters in r.inst.stack and returns its
// i32 result. An export that ends past a limit (a native loop that did not
// poll) is a timeout even when it succeeded.
func (r *run) call(f engine.Func) (int32, *RunError) {
	// A run that ended while the guest waited does not run it again.
	if e := r.cancelled(); e != nil {
		return 0, e
	}
	if e := r.begin(true); e != nil {
		return 0, e
	}
	err := f.CallWithStack(r.ctx, r.inst.stack[:])
	now := r.end()
	switch {
	case err != nil:
		return 0, r.classify(err)
	case r.compute.Load() >= int64(r.limits.ComputeTime):
		return 0, r.timeout(false, errDeadline)
	case now >= r.wallAt:
		return 0, r.timeout(true, errDeadline)
	}
	return wapi.DecodeI32(r.inst.stack[0]), nil
}

// resume delivers one nested call's outcome.
func (r *run) resume(c completion) (int32, *RunError) {
	r.pending--
	r.argBytes -= c.args
	r.answered(c.id)
	payload := []byte(c.res.Message)
	if c.res.Code != "" { // the message, a NUL, the code (docs/abi.md, ptcx_resume)
		payload = append(append(payload, 0), c.res.Code...)
	}
	ok := uint64(0)
	if c.res.OK {
		payload, ok = c.res.Value, 1
		if c.res.Handle {
			ok = abi.ResumeHandle
		}
	}
	ptr, e := r.write(payload)
	if e != nil {
		return 0, e
	}
	st := &r.inst.stack
	st[0], st[1], st[2], st[3] = wapi.EncodeI32(c.id), ok, uint64(ptr), uint64(len(payload))
	return r.call(r.inst.resume)
}

// fire runs one timer's callback.
func (r *run) fire(id int32) (int32, *RunError) {
	r.inst.stack[0] = wapi.EncodeI32(id)
	return r.call(r.inst.timer)
}

// failure returns why the host stopped the guest, if it did: what an
// import recorded with run.stop (a limit, a deadline the poll import saw, a
// broken ABI), a cancellation, a closed Runtime.
func (r *run) failure() *RunError {
	if r.stopped != nil {
		e := *r.stopped
		return &e
	}
	return r.cancelled()
}

// classify turns an export's error into the RunError the caller sees.
func (r *run) classify(err error) *RunError {
	if e := r.failure(); e != nil {
		return e
	}
	return trapError(err, r.inst != nil && r.inst.memory.refused)
}

func (r *run) timeout(wall bool, cause error) *RunError { return timeoutError(r.limits, wall, cause) }

// timeoutError is the error of a run with limits stopped at its wall
// deadline (wall) or its compute limit.
func timeoutError(limits api.Limits, wall bool, cause error) *RunError {
	if wall {
		return &RunError{Kind: api.KindTimeout, Cause: cause,
			Message: fmt.Sprintf("the program exceeded its wall time limit of %v", limits.WallTime)}
	}
	return &RunError{Kind: api.KindTimeout, Cause: cause,
		Message: fmt.Sprintf("the program exceeded its compute time limit of %v (time spent running, not waiting on tools)",
			limits.ComputeTime)}
}

// abortError is the error of a run its caller cancelled.
func abortError(cause error) *RunError {
	return &RunError{Kind: api.KindAbort, Message: "the run was cancelled", Cause: cause}
}

// closedError is the error of a run stopped by Close.
func closedError() *RunError {
	return &RunError{Kind: api.KindAbort, Message: "the runtime was closed", Cause: ErrClosed}
}
