package serve

import (
	"context"
	"time"

	"github.com/ptcx/ptcx/executor"
)

// Live waits (server.live_wait_ms). An execution whose program comes to
// wait only on its client tools would park (park.go): a suspension to
// bytes and, once answered, a resume, a millisecond or two that a client
// answering within milliseconds should not pay. So it first waits live
// (executor.WithLiveWait): its calls turn pending, as parked ones do (the
// same call ids, the same pending events, answered by the same
// tool_results), while its instance stays live and keeps its concurrent
// slot and memory. Answered within the grace, the program continues in
// its instance. Otherwise it parks there, exactly as it would have, and
// the results given meanwhile are kept (its parked calls already
// answered); a result posted as it parks is never lost (takeWaitingLocked). At
// most quotas.max_live_waits of a tenant's executions wait live at once;
// past it they park at once. In a cluster an execution parks at once: its
// record must name bytes another node can take over.

// liveWaitOf returns ctx carrying x's live wait, when live waits are on.
func (s *Server) liveWaitOf(ctx context.Context, x *execution) context.Context {
	if s.cluster != nil || s.cfg.liveWait() <= 0 {
		return ctx
	}
	return executor.WithLiveWait(ctx, func(ctx context.Context, calls []executor.WaitingCall) (map[int32]executor.Answer, bool) {
		return s.awaitLive(ctx, x, calls)
	})
}

// awaitLive turns x pending on calls and waits for their results for the
// grace; it reports true with every answer, or false to park x (the
// pending calls are then x.waiting's, for park to take over).
func (s *Server) awaitLive(ctx context.Context, x *execution, calls []executor.WaitingCall) (map[int32]executor.Answer, bool) {
	t := x.tenant
	if t.liveWaits.Add(1) > t.maxLiveWaits {
		t.liveWaits.Add(-1)
		s.metrics.liveWaits.WithLabelValues(t.name, "full").Inc()
		return nil, false
	}
	defer t.liveWaits.Add(-1)
	expires := time.Now().Add(t.pendingTimeout)
	pcs := make([]*pendingCall, len(calls))
	x.mu.Lock()
	if x.cancelled {
		x.mu.Unlock()
		return nil, false
	}
	for i, c := range calls {
		pc := &pendingCall{call: PendingCall{ID: c.CallID, Kind: KindTool, Name: c.Tool, Arguments: c.Args}, expires: expires,
			answer: make(chan ToolResult, 1), parkID: c.ID}
		pcs[i] = pc
		x.pending = append(x.pending, pc)
		x.emitPendingLocked(pc)
	}
	x.waiting = pcs
	x.status = StatusPending
	x.notifyLocked()
	x.mu.Unlock()
	gauge := s.metrics.pendingCalls.WithLabelValues(t.name)
	gauge.Add(float64(len(pcs)))
	defer gauge.Sub(float64(len(pcs)))

	timer := time.NewTimer(s.cfg.liveWait())
	defer timer.Stop()
	answers := make(map[int32]executor.Answer, len(pcs))
	for _, pc := range pcs {
		select {
		case r := <-pc.answer:
			answers[pc.parkID] = answerOf(r)
			pc.answer <- r // kept for park, should the program park still (takeWaitingLocked)
		case <-timer.C:
			s.metrics.liveWaits.WithLabelValues(t.name, "parked").Inc()
			return nil, false
		case <-ctx.Done():
			return nil, false
		}
	}
	x.mu.Lock()
	x.waiting = nil
	x.mu.Unlock()
	s.metrics.liveWaits.WithLabelValues(t.name, "answered").Inc()
	return answers, true
}

// takeWaitingLocked takes x's live wait's calls over as it parks: each
// one answered meanwhile (its result in its channel) is answered parked,
// each other stays pending as a parked call. It returns their parked call
// ids (nil after no live wait); x.mu is held, x.answers made.
func (x *execution) takeWaitingLocked() map[int32]bool {
	if x.waiting == nil {
		return nil
	}
	taken := make(map[int32]bool, len(x.waiting))
	for _, pc := range x.waiting {
		select {
		case r := <-pc.answer:
			x.answerParkedLocked(pc, r)
		default:
		}
		pc.answer = nil // a parked call from here on (deliver)
		taken[pc.parkID] = true
	}
	x.waiting = nil
	return taken
}

// takeWaitingLive takes x's live wait's calls over as it goes on waiting
// for its client live instead of parking (Server.waitLive, past the
// parked bytes quota): the answers given meanwhile, by parked call id,
// for its resume; each other call stays pending, for the client tool's
// body to adopt (adoptPending).
func (x *execution) takeWaitingLive() map[int32]executor.Answer {
	x.mu.Lock()
	defer x.mu.Unlock()
	answers := map[int32]executor.Answer{}
	for _, pc := range x.waiting {
		select {
		case r := <-pc.answer:
			answers[pc.parkID] = answerOf(r)
		default:
			if x.adoptable == nil {
				x.adoptable = make(map[string]*pendingCall)
			}
			x.adoptable[pc.call.ID] = pc
		}
	}
	x.waiting = nil
	return answers
}

// adoptPending returns x's live call of that id that the program now
// waits on live (a live wait's call taken over by waitLive), pending or
// answered since (its result in its channel), or nil.
func (x *execution) adoptPending(id string) *pendingCall {
	x.mu.Lock()
	defer x.mu.Unlock()
	if pc, ok := x.adoptable[id]; ok {
		delete(x.adoptable, id)
		return pc
	}
	for _, pc := range x.pending {
		if pc.call.ID == id && pc.answer != nil {
			return pc
		}
	}
	return nil
}
