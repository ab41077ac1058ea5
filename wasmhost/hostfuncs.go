package wasmhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	wapi "github.com/tetratelabs/wazero/api"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
)

// The host functions of the "ptcx" import module, one per import of
// docs/abi.md. Each finds its run in the context of the export call, checks
// every pointer and length against the guest's memory, and never panics
// with anything but errStop: a broken guest ends its run with KindTrap
// (run.stop), never the host. Each holds run.mu, so that once Run returned
// none has any effect.

// errStop unwinds the guest after run.stop recorded why the run ends.
var errStop = errors.New("wasmhost: run stopped by the host")

type runKey struct{}

// enter returns the run of the export call, locked; the import unlocks it.
// It stops the guest when the run was abandoned.
func enter(ctx context.Context) *run {
	r, _ := ctx.Value(runKey{}).(*run)
	if r == nil {
		// Only runs call exports that reach the imports.
		panic(errStop)
	}
	r.mu.Lock()
	if r.abandoned {
		r.mu.Unlock()
		panic(errStop)
	}
	return r
}

// view returns the guest bytes at [ptr, ptr+length), without copying, or
// stops the run when the range is invalid.
func (r *run) view(mem engine.Memory, what string, ptr, length uint64, limit uint32) []byte {
	p, n, err := abi.GuestRange(mem.Size(), ptr, length, limit)
	if err != nil {
		r.stop(trapf("%s: %v", what, err))
	}
	b, ok := mem.Read(p, n)
	if !ok {
		r.stop(trapf("%s: range [%d, %d) is unreadable", what, p, p+n))
	}
	return b
}

// call(name_ptr, name_len, args_ptr, args_len) -> id | refusal
//
// Arguments over Limits.MaxCallArgBytes, or that would take the arguments
// of the calls pending past Limits.MaxInFlightArgBytes, are neither copied
// nor dispatched: the call gets an id and its promise rejects with a
// ToolCallError naming the limit, as a refused call's does, which the
// program can catch.
func hostCall(ctx context.Context, mem engine.Memory, stack []uint64) {
	r := enter(ctx)
	defer r.mu.Unlock()
	nameBytes := r.view(mem, "ptcx.call name", stack[0], stack[1], abi.MaxNameBytes)
	name, ok := r.tools[string(nameBytes)]
	if !ok && string(nameBytes) == abi.HandleCall { // a handle read (docs/abi.md, "Handles")
		name, ok = abi.HandleCall, true
	}
	if !ok {
		r.stop(trapf("ptcx.call: %q is not a bound tool", nameBytes))
	}
	switch {
	case r.pending >= r.limits.MaxPendingCalls:
		stack[0] = wapi.EncodeI32(abi.RefusedPending)
		return
	case r.calls+r.refusedCalls >= r.limits.MaxCalls:
		stack[0] = wapi.EncodeI32(abi.RefusedTotal)
		return
	}
	r.pending++
	r.lastID++
	id := r.lastID
	size := int(uint32(stack[3]))
	if msg := r.argsRefused(size); msg != "" {
		// Checked before the bytes are read: the range is checked too, so
		// that a broken guest still traps.
		r.view(mem, "ptcx.call args", stack[2], stack[3], math.MaxUint32)
		r.refusedCalls++ // not dispatched, but a call made: MaxCalls bounds a loop of them
		r.inbox.doneFunc(id, 0)(CallResult{Message: msg, Code: api.CodeInvalidArgs})
		stack[0] = wapi.EncodeI32(id)
		return
	}
	args := r.view(mem, "ptcx.call args", stack[2], stack[3], math.MaxUint32)
	r.calls++
	r.argBytes += size
	if r.unflushed == 0 {
		r.unflushed = 1 // started from the flushPolls-th poll on (poll)
	}
	if r.prog.Suspend != nil {
		r.hold(id, name, append([]byte(nil), args...)) // suspend.go
	} else {
		r.dispatch(name, json.RawMessage(append([]byte(nil), args...)), r.inbox.doneFunc(id, size))
	}
	stack[0] = wapi.EncodeI32(id)
}

// argsRefused says why arguments of size bytes may not be dispatched, or
// "" when they may.
func (r *run) argsRefused(size int) string {
	switch {
	case size > r.limits.MaxCallArgBytes:
		return fmt.Sprintf("the arguments are %d bytes, over the limit of %d bytes for one nested call: pass less data per call",
			size, r.limits.MaxCallArgBytes)
	case r.argBytes+size > r.limits.MaxInFlightArgBytes:
		return fmt.Sprintf("the nested calls pending hold %d bytes of arguments, and this call's %d more would pass the limit of %d bytes at once: "+
			"await some of them before starting more", r.argBytes, size, r.limits.MaxInFlightArgBytes)
	}
	return ""
}

// dispatch hands one call to the Dispatcher; a panic in it ends the run
// instead of unwinding through the guest.
func (r *run) dispatch(name string, args json.RawMessage, done func(CallResult)) {
	defer func() {
		if p := recover(); p != nil {
			r.stop(&RunError{Kind: api.KindTrap, Message: "the host failed to dispatch a nested call",
				Cause: fmt.Errorf("wasmhost: Dispatcher panicked: %v", p)})
		}
	}()
	r.disp.Dispatch(name, args, done)
}

// log(level, text_ptr, text_len)
func hostLog(ctx context.Context, mem engine.Memory, stack []uint64) {
	r := enter(ctx)
	defer r.mu.Unlock()
	level := wapi.DecodeU32(stack[0])
	if level >= uint32(len(logPrefixes)) {
		r.stop(trapf("ptcx.log: unknown level %d", level))
	}
	text := r.view(mem, "ptcx.log text", stack[1], stack[2], math.MaxUint32)
	if r.onLog != nil {
		r.onLog(logPrefixes[level] + string(text))
	}
	if !r.output.log(logPrefixes[level], text) {
		r.stop(&RunError{Kind: api.KindOutputLimit, Logs: r.output.lines,
			Message: fmt.Sprintf("console output exceeded the output limit of %d bytes; the logs kept are its first %d bytes",
				r.output.limit, r.output.used)})
	}
}

// timer_set(delay_ms) -> id | refusal
func hostTimerSet(ctx context.Context, _ engine.Memory, stack []uint64) {
	r := enter(ctx)
	defer r.mu.Unlock()
	delay := wapi.DecodeI32(stack[0])
	if delay < 0 {
		delay = 0
	}
	now := time.Now()
	if r.prog.World != nil || (r.rt != nil && r.rt.cfg.deterministic) {
		now = r.timers.VirtualNow(r.began)
	}
	id, ok := r.timers.Add(now, delay)
	if !ok {
		stack[0] = wapi.EncodeI32(abi.RefusedTimers)
		return
	}
	stack[0] = wapi.EncodeI32(id)
}

// timer_clear(id)
func hostTimerClear(ctx context.Context, _ engine.Memory, stack []uint64) {
	r := enter(ctx)
	defer r.mu.Unlock()
	r.timers.Clear(wapi.DecodeI32(stack[0]))
}

// result(json_ptr, json_len)
func hostResult(ctx context.Context, mem engine.Memory, stack []uint64) {
	r := enter(ctx)
	defer r.mu.Unlock()
	if r.result != nil {
		r.stop(trapf("ptcx.result: called twice"))
	}
	b := r.view(mem, "ptcx.result", stack[0], stack[1], math.MaxUint32)
	if !json.Valid(b) {
		r.stop(trapf("ptcx.result: the result is not valid JSON"))
	}
	if n := shownSize(b); !r.output.fitsResult(n) {
		r.stop(&RunError{Kind: api.KindOutputLimit, Logs: r.output.lines,
			Message: fmt.Sprintf("the result (%d bytes as shown) does not fit the output limit of %d bytes (the logs used %d)",
				n, r.output.limit, r.output.used)})
	}
	r.result = json.RawMessage(append([]byte(nil), b...))
}

// error(json_ptr, json_len)
func hostError(ctx context.Context, mem engine.Memory, stack []uint64) {
	r := enter(ctx)
	defer r.mu.Unlock()
	if r.guestErr != nil {
		r.stop(trapf("ptcx.error: called twice"))
	}
	e, err := decodeGuestError(r.view(mem, "ptcx.error", stack[0], stack[1], abi.MaxErrorBytes))
	if err != nil {
		r.stop(trapf("ptcx.error: %v", err))
	}
	r.guestErr = e
}

func trapf(format string, args ...any) *RunError {
	return &RunError{Kind: api.KindTrap, Message: "the guest broke the host ABI", Cause: fmt.Errorf("wasmhost: "+format, args...)}
}

// poll() -> 0
//
// The guest polls every few thousand operations: from QuickJS's interrupt
// handler, and from every pollInterval loop iterations of its code, which
// the host meters (meter.go). When the run's time is up (its compute time
// judged in CPU time once the export is long, compute.go), it is cancelled
// or the Runtime closed, the guest is stopped right there. Otherwise, at
// the flushPolls-th poll after the guest's first call not yet started, the
// run starts the calls it holds (for Program.Suspend) and an IdleDispatcher
// those it holds, so that a call made before a long computation does not
// wait for its end; a guest that has computed for a slot quantum while another
// waits for a slot gives it its slot and waits for one again; and one that
// computes lets goroutines ready to run run every millisecond (goQuantum).
func hostPoll(ctx context.Context, _ engine.Memory, stack []uint64) {
	stack[0] = 0
	if ctx.Value(runKey{}) == nil {
		// Outside a run: the guest's start-up code (WASI's _initialize),
		// which the metered guest may poll from too.
		return
	}
	if r, t := poll(ctx); r != nil {
		r.takeTurn(t)
	}
}

// poll is the poll import under run.mu; it returns the run when its guest
// should take a turn (run.takeTurn).
func poll(ctx context.Context) (*run, turn) {
	r := enter(ctx)
	defer r.mu.Unlock()
	t := r.polled(r.since())
	if e := r.cancelled(); e != nil {
		r.stop(e)
	}
	if r.unflushed > 0 {
		if r.unflushed++; r.unflushed > flushPolls {
			if e := r.flush(); e != nil {
				r.stop(e)
			}
		}
	}
	if t != turnNone {
		return r, t
	}
	return nil, turnNone
}

// flushPolls is how many polls after the guest's first call not yet
// started its held calls are started (run.flush). Counted from the call,
// not from the export's start: a call followed by a short wind-down to the
// quiescent point stays held however long the export ran before it (a
// Python program's first export compiles it: tens of thousands of loop
// iterations), so Program.Suspend can park it and an IdleDispatcher run it
// at the idle point; a long computation after the call reaches it within
// one to two poll intervals (the meter's countdown is not reset between
// exports), so the call starts meanwhile. Polls, not time: the choice does
// not depend on the machine's load.
const flushPolls = 2
