package wasmhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// Calls into the guest's exports, on the guest's goroutine.

// errDeadline is the cause of a timeout: it matches context.DeadlineExceeded.
var errDeadline = fmt.Errorf("wasmhost: %w", context.DeadlineExceeded)

// instantiate creates the run's instance. Its time counts toward the wall
// limit only.
func (r *run) instantiate() *RunError {
	r.enter(r.wallDeadline)
	inst, err := r.rt.newInstance(r.ctx, r.limits.MemoryBytes)
	r.leave(false)
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
	var cfg bytes.Buffer
	enc := json.NewEncoder(&cfg)
	enc.SetEscapeHTML(false)
	err := enc.Encode(guestConfig{
		Code:            r.prog.JS,
		Tools:           r.prog.Tools,
		MemoryLimit:     engineMemoryLimit(r.limits.MemoryBytes),
		MemoryBytes:     r.limits.MemoryBytes,
		MaxPendingCalls: r.limits.MaxPendingCalls,
		MaxCalls:        r.limits.MaxCalls,
		MaxTimers:       maxTimers,
	})
	if err != nil {
		return 0, &RunError{Kind: KindTrap, Message: "the program could not be passed to the guest", Cause: err}
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
	deadline, _ := r.computeDeadline()
	r.enter(deadline)
	ptr, err := r.inst.write(r.ctx, b)
	r.leave(true)
	switch {
	case errors.Is(err, errBufferFull):
		return 0, &RunError{Kind: KindMemory, Cause: err, Message: fmt.Sprintf(
			"out of memory: %d bytes for the guest do not fit its memory limit of %d bytes", len(b), r.limits.MemoryBytes)}
	case err != nil:
		return 0, r.classify(err)
	}
	return ptr, nil
}

// computeDeadline is the deadline of the next export: when the compute
// budget runs out, or the wall deadline if that comes first. It also
// returns the time it was computed at.
func (r *run) computeDeadline() (deadline, now time.Time) {
	now = time.Now()
	d := now.Add(r.limits.ComputeTime - time.Duration(r.compute.Load()))
	if r.wallDeadline.Before(d) {
		return r.wallDeadline, now
	}
	return d, now
}

// enter marks the start of an export with the given deadline, which the
// poll import enforces and the watchdog backs up. The watchdog stays armed
// across exports and is armed again only when it would fire too late for
// this one; when it fires early, run.run arms it again.
func (r *run) enter(deadline time.Time) {
	r.polls = 0
	d := r.since(deadline)
	r.deadline.Store(d)
	r.inExport.Store(r.since())
	if at := r.watchAt.Load(); at == 0 || at > d+int64(grace) {
		r.armWatchdog(d + int64(grace))
	}
}

// armWatchdog sets the watchdog to fire at the instant at (see run.since).
func (r *run) armWatchdog(at int64) {
	r.watchAt.Store(at)
	r.watchdog.Reset(time.Duration(at - r.since()))
}

// leave marks the end of an export; compute says whether its time counts
// toward the compute limit.
func (r *run) leave(compute bool) {
	if compute {
		r.compute.Add(r.since() - r.inExport.Load())
	}
	r.inExport.Store(0)
	r.deadline.Store(0)
	if r.inst != nil {
		r.memory.Store(int64(r.inst.mem.Size()))
	}
}

// call runs one export with the parameters in r.inst.stack and returns its
// i32 result. An export that ends after its deadline (a native loop that
// did not poll) is a timeout even when it succeeded.
func (r *run) call(f api.Function) (int32, *RunError) {
	deadline, now := r.computeDeadline()
	wall := deadline.Equal(r.wallDeadline)
	// A run that ended while the guest waited does not run it again.
	if e := r.cancelled(); e != nil {
		return 0, e
	}
	if !now.Before(deadline) {
		return 0, r.timeout(wall, errDeadline)
	}
	r.enter(deadline)
	err := f.CallWithStack(r.ctx, r.inst.stack[:])
	r.leave(true)
	switch {
	case err != nil:
		return 0, r.classify(err)
	case !time.Now().Before(deadline):
		return 0, r.timeout(wall, errDeadline)
	}
	return api.DecodeI32(r.inst.stack[0]), nil
}

// resume delivers one nested call's outcome.
func (r *run) resume(c completion) (int32, *RunError) {
	r.pending--
	payload := []byte(c.res.Message)
	ok := uint64(0)
	if c.res.OK {
		payload, ok = c.res.Value, 1
	}
	ptr, e := r.write(payload)
	if e != nil {
		return 0, e
	}
	st := &r.inst.stack
	st[0], st[1], st[2], st[3] = api.EncodeI32(c.id), ok, uint64(ptr), uint64(len(payload))
	return r.call(r.inst.resume)
}

// fire runs one timer's callback.
func (r *run) fire(id int32) (int32, *RunError) {
	r.inst.stack[0] = api.EncodeI32(id)
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

func (r *run) timeout(wall bool, cause error) *RunError {
	if wall {
		return &RunError{Kind: KindTimeout, Cause: cause,
			Message: fmt.Sprintf("the program exceeded its wall time limit of %v", r.limits.WallTime)}
	}
	return &RunError{Kind: KindTimeout, Cause: cause,
		Message: fmt.Sprintf("the program exceeded its compute time limit of %v (time spent running, not waiting on tools)",
			r.limits.ComputeTime)}
}

func (r *run) abort(cause error) *RunError {
	return &RunError{Kind: KindAbort, Message: "the run was cancelled", Cause: cause}
}

func (r *run) closedError() *RunError {
	return &RunError{Kind: KindAbort, Message: "the runtime was closed", Cause: ErrClosed}
}
