package executor

import (
	"context"
)

// The inline path: when the program waits on exactly one nested call and
// nothing else, wasmhost lends the scheduler the runtime's own goroutine
// (wasmhost.IdleDispatcher.Idle), and the call runs there instead of going
// through the sequencer and a body goroutine of its own. That spares two
// goroutine hand-offs, which cost more than everything else in an awaited
// call. The call goes through the same phases in the same order as any
// other; only its goroutine differs. This file owns the path: when a call
// may take it (Idle), and running it there (runInline).

// Idle runs the one call the program waits on, on the runtime's goroutine,
// when nothing else is in flight: every earlier call has committed and the
// sequencer holds none. Otherwise it hands the held calls to the sequencer,
// as Flush does.
func (s *scheduler) Idle(ctx context.Context, handover func()) {
	s.mu.Lock()
	s.deferred = true
	if len(s.queue) != 1 || s.handed > 0 || s.busy || s.settled || s.inflight > 0 {
		s.handOff()
		s.mu.Unlock()
		return
	}
	n := s.queue[0]
	s.queue[0] = nil
	s.queue = s.queue[:0]
	s.take()
	s.mu.Unlock()
	if s.outlive {
		// The run may be handed over at its idle point and suspended
		// while the call runs here (wasmhost.Program.SuspendIdle): the
		// call's context is the run_code body's, as any nested call's.
		ctx = s.ctx
	}
	s.runInline(ctx, n, handover)
}

// runInline takes n through its phases on this goroutine and commits it.
//
// If the body overstays (it ignores its context for cancelGrace past its
// timeout or the run's end), the call settles and commits from the body's
// grace timer without it, and handover lets the run go on on another
// goroutine while this one stays stuck in the body (body.lost).
func (s *scheduler) runInline(ctx context.Context, n *nested, handover func()) {
	if testHookInline != nil {
		testHookInline(n.x.req)
	}
	if !n.x.prepare(ctx) {
		if n.x.askParked != nil {
			s.held(n, parkingOf(ctx)) // park_approval.go
			return
		}
		s.commit(n)
		return
	}
	if b := n.x.startBody(ctx, n, handover, s.watches.of(ctx)); b != nil {
		b.run()
	}
}

// testHookInline, when set by a test, sees every call the inline path runs.
var testHookInline func(Request)
