package serve

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/runners"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/serve/internal/cluster"
	"github.com/ptcx/ptcx/serve/internal/quota"
	"github.com/ptcx/ptcx/serve/store"
	"github.com/ptcx/ptcx/wasmhost"
)

// Parking. An execution whose program comes to wait only on its client
// tools is parked (executor.ExecuteParkable): its instance is released,
// its goroutine ends, and with a store its bytes are written there
// (parkfile.go) and named in its record before the response is sent. The
// execution holds its pending quota, not a concurrent slot. When every
// parked call is answered (or has expired: TOOL_TIMEOUT), it resumes:
// from the Parked this node holds, else from the store's bytes (after a
// restart, or on another node that took it over: internal/cluster/takeover.go).
//
// Where parking cannot be used the client tool's body waits live
// (pending.go): a client tool called while another, server-side, call of
// the program is in flight is dispatched at once, and a dispatched call
// cannot be parked; it stays live until answered, and does not survive
// its node.

// parkSpec is what rebuilds an execution's executor on another node: its
// scope, workspace state and client tools.
type parkSpec struct {
	Scope string `json:"scope,omitempty"`
	// Session is the execution's workspace state's name
	// (ExecutionRequest.workspaceState), under the JSON name that records
	// already stored carry.
	Session     string       `json:"session,omitempty"`
	ClientTools []ClientTool `json:"client_tools"`
}

// isClientTool reports whether the program's tool of that name is one of
// the execution's client tools: what ExecuteParkable may park on.
func (x *execution) isClientTool(name string) bool {
	if x.live.Load() {
		return false
	}
	for _, ct := range x.spec.ClientTools {
		if ct.Name == name {
			return true
		}
	}
	return false
}

// run runs (or, with p, resumes) x's program on the calling goroutine
// and, when it parks, parks it; otherwise it settles x. release gives the
// concurrent slot back.
func (s *Server) run(ctx context.Context, x *execution, r api.Result, p *executor.Parked, release func()) {
	release()
	if p != nil && ctx.Err() == nil {
		err := s.park(x, p)
		switch {
		case err == nil:
			return
		case errors.Is(err, errNoParkRoom):
			s.log.Info("a pending execution waits live: its tenant's parked bytes are at their quota (quotas.max_parked_bytes)",
				x.logAttrs("tenant", x.tenant.name)...)
			s.waitLive(ctx, x, p)
			return
		}
		r = p.Discard(context.WithoutCancel(ctx))
		r.Err = &api.Error{Code: api.CodeInternal, Message: "the execution could not be parked: " + err.Error()}
		r.Text = r.Err.Message
	} else if p != nil {
		r = p.Discard(context.WithoutCancel(ctx)) // cancelled as it parked
	}
	s.settleRun(x, r)
}

// settleRun records x's result: metrics, the table, the quotas, the log.
func (s *Server) settleRun(x *execution, r api.Result) {
	t := x.tenant
	// The metrics first: a client that sees the execution settled sees it
	// counted too.
	outcome := StatusCompleted
	if !r.OK() {
		outcome = StatusFailed
	}
	s.metrics.running.WithLabelValues(t.name).Dec()
	s.metrics.executions.WithLabelValues(t.name, outcome).Inc()
	s.metrics.duration.WithLabelValues(t.name, outcome).Observe(time.Since(x.created).Seconds())
	// The table next, so that a client that sees x settled finds what
	// its settling evicted gone (max_retained). The count never evicts x
	// here, the newest; its retention starts now.
	at := time.Now()
	x.stampSettled(at)
	s.file(x, at, r)
	x.settle(r)
	if s.cluster != nil {
		// A parked execution has no follower (it stopped once the parked
		// record was written): one writes the settled record and publishes
		// the done event, which other nodes' streams end on.
		s.cluster.Wake(x)
	}
	x.mu.Lock()
	rp := x.releasePending
	x.releasePending = nil
	size := x.parkedSize // bytes a settled execution no longer stands for
	x.parkedSize = 0
	x.mu.Unlock()
	t.quota.Parked(-size)
	if rp != nil {
		rp()
	}
	code := ""
	if r.Err != nil {
		code = string(r.Err.Code)
	}
	s.log.Info("execution settled", x.logAttrs("tenant", t.name, "status", outcome, "code", code,
		"duration_ms", time.Since(x.created).Milliseconds())...)
}

// park writes p's bytes to the store (if any), then turns x pending on
// p's calls, holding p, and arms their expiry.
func (s *Server) park(x *execution, p *executor.Parked) error {
	name, calls := "", p.Calls()
	now := time.Now()
	pcs := make([]*pendingCall, len(calls)) // before p is released below
	for i, c := range calls {
		pcs[i] = x.tenant.pendingOfParked(p, c, now)
	}
	var size int64
	grace := s.spillGrace()
	if grace > 0 && !x.tenant.quota.ParkRoom() {
		return errNoParkRoom
	}
	if (s.cluster != nil || s.spill != nil) && grace == 0 {
		data, err := encodeParkFile(x, p, now)
		if err != nil {
			return err
		}
		size = int64(len(data))
		if !x.tenant.quota.ParkRoom() {
			return errNoParkRoom
		}
		name = snapshotNameOf(x.id, data)
		if s.cluster != nil {
			if err := s.mayWrite(x); err != nil { // fencing.go
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), cluster.StoreTimeout)
			defer cancel()
			if err := s.cluster.Store.PutSnapshot(ctx, name, data); err != nil {
				return fmt.Errorf("writing its snapshot to the store: %w", err)
			}
		} else if err := s.spill.Put(name, data); err != nil {
			return err
		}
		if s.cluster == nil || s.cfg.parkGrace() == 0 {
			p.Release() // its bytes stand for it now: resume restores them
			p = nil
		}
	}
	x.tenant.quota.Parked(size)
	x.mu.Lock()
	x.parked, x.snapshot, x.resuming, x.parkedSize, x.parkedAt = p, name, false, size, now
	x.answers, x.given = map[int32]executor.Answer{}, map[int32]ToolResult{}
	waited := x.takeWaitingLocked() // a live wait's calls, pending already (livewait.go)
	for _, pc := range pcs {
		if waited[pc.parkID] {
			continue
		}
		x.pending = append(x.pending, pc)
		x.emitPendingLocked(pc)
	}
	due := x.resumeDueLocked() // every call answered as it parked: it resumes at once
	if !due {
		x.status = StatusPending
	}
	x.armExpiryLocked(s)
	// Counted before a waiter is woken: a client told "pending" finds it
	// parked in /metrics too.
	s.metrics.parked.WithLabelValues(x.tenant.name).Inc()
	x.notifyLocked()
	x.mu.Unlock()
	s.holdForGrace(x, p)
	if herr := s.persist(x); herr != nil { // now, whoever reads the state first; a handler's write after it is a no-op
		s.log.Warn("writing a parked execution's record failed; its follower retries", x.logAttrs("error", herr.Body.Message)...)
	}
	s.log.Info("execution parked", x.logAttrs("tenant", x.tenant.name, "calls", len(calls), "snapshot", name)...)
	if due {
		s.resumeOrRetry(x)
	}
	return nil
}

// spillGrace is how long an execution parked on its client stays in
// memory before its bytes are written to the spill directory
// (server.park_grace_ms): 0 when they are written at once (with a store
// shared beyond the process, whose record must name bytes another node
// can read) or kept in memory (no spill directory).
func (s *Server) spillGrace() time.Duration {
	if s.cluster != nil || s.spill == nil {
		return 0
	}
	return s.cfg.parkGrace()
}

// holdForGrace keeps p, the program of x parked in memory, for the park
// grace (server.park_grace_ms), so that a client answering within it
// resumes x from memory, and then lets it go (endGrace): spilled, or,
// with a store, its bytes there standing for it alone. A parked
// execution's program in memory is its whole snapshot, uncompressed
// (~180 KiB for a small program): held past the grace, 10,000 parked on a
// store took 1.8 GiB where their bytes on disk were 560 MiB. A nil p (its
// bytes stand for it already) holds nothing.
func (s *Server) holdForGrace(x *execution, p *executor.Parked) {
	if p == nil {
		return
	}
	grace := s.cfg.parkGrace()
	if s.cluster == nil {
		grace = s.spillGrace() // 0: kept in memory, with nowhere else to go
	}
	if grace > 0 {
		time.AfterFunc(grace, func() { s.endGrace(x, p) })
	}
}

// endGrace ends the park grace of x, parked in memory on p since
// x.parkedAt, unless x resumed (or settled) meanwhile: with its bytes in
// the store already (x.snapshot), p is released, and a resume reads them
// back; without, they are written to the spill directory first. It holds
// x.mu throughout, so that a resume waits for the bytes it will read. A
// failure to spill leaves x parked in memory, as without a spill
// directory, and is logged.
func (s *Server) endGrace(x *execution, p *executor.Parked) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.parked != p || !x.parkedLocked() {
		return // resumed within the grace: nothing to write
	}
	if x.snapshot != "" {
		p.Release() // its bytes in the store stand for it now
		x.parked = nil
		return
	}
	data, err := encodeParkFileLocked(x, p, x.parkedAt)
	if err == nil {
		name := snapshotNameOf(x.id, data)
		if err = s.spill.Put(name, data); err == nil {
			p.Release() // its bytes stand for it now: resume restores them
			size := int64(len(data))
			x.parked, x.snapshot, x.parkedSize = nil, name, size
			x.tenant.quota.Parked(size)
			s.metrics.spills.WithLabelValues(x.tenant.name).Inc()
			s.log.Info("execution spilled", x.logAttrs("tenant", x.tenant.name, "snapshot", name, "bytes", size)...)
			return
		}
	}
	s.log.Warn("writing a parked execution's bytes to the spill directory failed; it stays parked in memory",
		"execution", x.id, "error", err.Error())
}

// snapshotNameOf names parked bytes in the store: "<execution id>.<12
// random hex digits>.<the first 16 hex digits of the bytes' SHA-256>", so
// that a record names its own execution's bytes, and which of them
// (parkfile.go belongsTo).
func snapshotNameOf(id string, data []byte) string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return id + "." + hex.EncodeToString(b[:]) + "." + snapshotSum(data)
}

func snapshotSum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// pendingOfParked is the pending item of c, a call p parked on at at: a
// client tool's, expiring after the tenant's pending timeout, or an
// approval (approval.go), after its approval timeout.
func (t *tenant) pendingOfParked(p *executor.Parked, c executor.ParkedCall, at time.Time) *pendingCall {
	id := p.CallID(c.ID)
	if c.Kind == executor.ParkedApproval {
		label := c.Label
		return &pendingCall{call: approvalPending(id, c.Tool, c.Args, c.Reason, &label), expires: at.Add(t.approvalTimeout), parkID: c.ID}
	}
	return &pendingCall{call: PendingCall{ID: id, Kind: KindTool, Name: c.Tool, Arguments: c.Args}, expires: at.Add(t.pendingTimeout), parkID: c.ID}
}

// emitPendingLocked emits the pending event of one call (approval_pending
// for an approval); x.mu is held.
func (x *execution) emitPendingLocked(pc *pendingCall) {
	typ := EventPending
	if pc.isApproval() {
		typ = EventApprovalPending
	}
	x.emitLocked(typ, struct {
		PendingCall
		ExpiresAt time.Time `json:"expires_at"`
	}{pc.call, pc.expires})
}

// isParked reports whether x is parked (on this node or, with a store,
// in it) and not resuming.
func (x *execution) isParked() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.parkedLocked()
}

func (x *execution) parkedLocked() bool { return x.answers != nil && !x.resuming }

// answerParkedLocked records a client's result for a parked call; x.mu is
// held.
func (x *execution) answerParkedLocked(pc *pendingCall, r ToolResult) {
	if pc.isApproval() { // a decision, as the record keeps it (approval.go)
		d := decisionOf(r)
		if x.decided == nil {
			x.decided = make(map[string]Decision)
		}
		x.decided[pc.call.ID] = d
		x.answers[pc.parkID] = decisionAnswer(d)
		x.given[pc.parkID] = r
		return
	}
	x.answers[pc.parkID] = answerOf(r)
	x.given[pc.parkID] = r
}

// answerOf is what a client's result is to the program.
func answerOf(r ToolResult) executor.Answer {
	a := executor.Answer{Output: api.Output{Value: r.Value}}
	if len(a.Output.Value) == 0 {
		a.Output.Value = json.RawMessage("null")
	}
	if !r.OK {
		msg := "the client reported a failure"
		if r.Error != nil {
			msg = r.Error.Message
		}
		a = executor.Answer{Err: api.Errorf(api.CodeToolFailed, "%s", msg)}
	}
	return a
}

// resumeDueLocked reports whether x is parked with every call answered.
func (x *execution) resumeDueLocked() bool {
	return x.parkedLocked() && len(x.pending) == 0
}

// armExpiryLocked arms the timer that answers the parked calls past their
// expires_at with TOOL_TIMEOUT; x.mu is held.
func (x *execution) armExpiryLocked(s *Server) {
	if x.expiry != nil {
		x.expiry.Stop()
		x.expiry = nil
	}
	var first time.Time
	for _, p := range x.pending {
		if first.IsZero() || p.expires.Before(first) {
			first = p.expires
		}
	}
	if first.IsZero() {
		return
	}
	x.expiry = time.AfterFunc(time.Until(first), func() { s.expire(x) })
}

// expire answers x's parked calls past their expiry with TOOL_TIMEOUT, as
// a live client tool's body would, and resumes x once none is left.
func (s *Server) expire(x *execution) {
	now := time.Now()
	x.mu.Lock()
	if !x.parkedLocked() {
		x.mu.Unlock()
		return
	}
	left := x.pending[:0]
	for _, p := range x.pending {
		if now.Before(p.expires) {
			left = append(left, p)
			continue
		}
		x.answers[p.parkID] = executor.Answer{Err: api.Errorf(api.CodeToolTimeout,
			"the client did not answer %s (call %s) before it expired at %s", p.call.Name, p.call.ID, p.expires.UTC().Format(time.RFC3339))}
		if p.isApproval() { // declined (approval.go)
			d := timedOut(p)
			x.answers[p.parkID] = decisionAnswer(d)
			if x.decided == nil {
				x.decided = make(map[string]Decision)
			}
			x.decided[p.call.ID] = d
		}
		// Not in x.given: a node taking it over expires it again, from its expires_at.
		x.emitLocked(EventExpired, map[string]string{"id": p.call.ID})
	}
	x.pending = left
	due := x.resumeDueLocked()
	if !due {
		x.armExpiryLocked(s)
	}
	x.notifyLocked()
	x.mu.Unlock()
	if !due && s.cluster != nil {
		s.cluster.Wake(x) // its follower publishes the expired events and writes the record
	}
	if due {
		s.resumeOrRetry(x)
	}
}

// resumeOrRetry resumes x with no client waiting on it (its calls expired,
// or it was taken over answered): a resume refused for now is retried
// every DefaultRetryAfter until it starts, or x is answered again.
func (s *Server) resumeOrRetry(x *execution) {
	herr := s.resume(x)
	if herr == nil {
		return
	}
	s.log.Warn("resuming a parked execution was refused for now; retried", x.logAttrs("error", herr.Body.Message,
		"retry_ms", DefaultRetryAfter.Milliseconds())...)
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.parkedLocked() {
		if x.expiry != nil {
			x.expiry.Stop()
		}
		x.expiry = time.AfterFunc(DefaultRetryAfter, func() { s.retryResume(x) })
	}
}

func (s *Server) retryResume(x *execution) {
	x.mu.Lock()
	due := x.resumeDueLocked()
	x.mu.Unlock()
	if due {
		s.resumeOrRetry(x)
	}
}

// resume continues a parked x whose calls are all answered, on a
// runner (runners.go), within the tenant's concurrent quota (429 while
// it is full: the answers are kept, and posting results again, even none,
// retries). It returns once the program runs again (its first resumed
// call started, or its run ended), or with the answer for a resume that
// met a failure that may pass: its bytes could not be read now, the
// sandbox had no room (BUSY), the tenant's sessions were all in use. Then
// x stays parked, its answers and its bytes kept, and a retry resumes it;
// its bytes are dropped only once the program ran. A failure that will
// not pass (its bytes are gone, corrupt, not x's, or its program cannot
// continue here) settles x as failed.
func (s *Server) resume(x *execution) *httpError {
	if herr := s.mayResume(x); herr != nil { // fencing.go
		return herr
	}
	k, herr := s.admit(x.tenant, x.resumeWork())
	if herr != nil {
		return herr
	}
	release := k.EndRun
	x.mu.Lock()
	if !x.resumeDueLocked() {
		x.mu.Unlock()
		release()
		return nil
	}
	p, answers, name := x.parked, x.answers, x.snapshot
	x.parked = nil
	x.resuming, x.status = true, StatusRunning
	if x.expiry != nil {
		x.expiry.Stop()
		x.expiry = nil
	}
	ctx, cancel := context.WithCancel(s.runContext(x))
	x.cancel = cancel
	x.notifyLocked()
	x.mu.Unlock()
	s.metrics.parked.WithLabelValues(x.tenant.name).Dec()
	if p == nil {
		var retry *httpError
		var err error
		p, retry, err = s.restore(ctx, x, name)
		if p == nil {
			cancel()
			release()
			switch {
			case x.wasCancelled():
				s.settleRun(x, cancelledWhileParked(x.id))
				s.dropSnapshot(x, name)
			case retry != nil:
				s.unresume(x, nil)
				return retry
			default:
				s.failParked(x, name, err)
			}
			return nil
		}
	}
	if s.cluster != nil {
		s.cluster.Wake(x)
	}
	mark := x.emitted()
	started := make(chan *httpError, 1)
	s.begin()
	s.runners.Start(runners.Func(func() {
		defer s.end()
		defer cancel()
		// It may wait for its client live again before it parks (livewait.go).
		r, again := p.Resume(s.liveWaitOf(wasmhost.WithLogHook(ctx, x.logLine), x), answers)
		if again == p { // BUSY: nothing ran
			release()
			s.unresume(x, p)
			started <- unavailable(string(api.CodeBusy), "execution %s could not resume: %s; %s", x.id, r.Err.Message, stillParked)
			return
		}
		started <- nil
		s.forgetSnapshot(x, name) // the program ran: its bytes are past
		s.run(ctx, x, r, again, release)
		// Once x settled or parked again: a client waiting for it does not
		// wait for the file system too (an unlink took up to tens of ms
		// on a busy disk, the resumes' p99).
		s.removeSpilled(x, name)
	}))
	return x.awaitStart(started, mark)
}

// resumeWork is what x's resumed run is admitted as: the work its first
// run was (or, taken over from another node, the tenant's defaults: an
// upper bound), holding its pending reservation already.
func (x *execution) resumeWork() quota.Work {
	w := x.work
	if w.Memory == 0 && w.Compute == 0 {
		w = x.tenant.runWork(nil)
	}
	w.Client, w.Resume = true, true
	return w
}

// errNoParkRoom is park's error when the tenant's parked bytes have no
// room for the execution's snapshot (quotas.max_parked_bytes).
var errNoParkRoom = errors.New("serve: the tenant's parked bytes are at their quota")

// waitLive continues an execution whose program would have parked past
// its tenant's parked bytes quota: its client calls wait live, its run
// admitted again within the tenant's memory share, and it never parks
// again. With no room there either, it fails BUSY (retryable).
func (s *Server) waitLive(ctx context.Context, x *execution, p *executor.Parked) {
	x.live.Store(true)
	busy := func(why string) {
		r := p.Discard(context.WithoutCancel(ctx))
		r.Err = &api.Error{Code: api.CodeBusy, Message: "the execution could neither park (its tenant's parked snapshots are at quotas.max_parked_bytes) nor wait for its client live: " + why + "; retry it"}
		r.Text = r.Err.Message
		s.settleRun(x, r)
	}
	k, herr := s.admit(x.tenant, x.resumeWork())
	if herr != nil {
		busy(herr.Body.Message)
		return
	}
	s.log.Info("execution waits for its client live: its tenant's parked bytes are at their quota", x.logAttrs("tenant", x.tenant.name)...)
	ctx = executor.WithCallApprover(ctx, s.liveApprover(x)) // its approvals wait live too (approval.go)
	// The results given while it waited live stand (livewait.go).
	r, again := p.Resume(ctx, x.takeWaitingLive())
	if again == p { // BUSY: nothing ran
		k.EndRun()
		busy(r.Err.Message)
		return
	}
	s.run(ctx, x, r, again, k.EndRun)
}

// stillParked ends the message of a resume that may succeed when retried.
const stillParked = "it is still parked, the results given so far kept: retry (POST its tool_results again, even with no results)"

// awaitStart waits until x's resumed program runs (it emitted an event:
// its first resumed call started) or its Resume returned, and returns
// what started says of the latter: nil, or the answer for a Resume that
// did not run the program.
func (x *execution) awaitStart(started <-chan *httpError, mark int) *httpError {
	for {
		x.mu.Lock()
		moved, ch := x.emittedLocked() > mark, x.changed
		x.mu.Unlock()
		if moved {
			return nil
		}
		select {
		case herr := <-started:
			return herr
		case <-ch:
		}
	}
}

// emitted counts x's events so far, those dropped over max_events too.
func (x *execution) emitted() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.emittedLocked()
}

func (x *execution) emittedLocked() int { return x.eventBase + len(x.events) + x.dropped }

// unresume puts x back as it was parked before a resume that did not
// start: its answers kept, p (nil, or the program the resume held)
// released where its bytes stand for it (spilled, or in the store), else
// held in memory again for the rest of its grace. A DELETE that came
// meanwhile is applied now.
func (s *Server) unresume(x *execution, p *executor.Parked) {
	x.mu.Lock()
	if p != nil && x.snapshot != "" {
		p.Release() // its bytes restore it again
		p = nil
	}
	x.parked, x.resuming, x.status = p, false, StatusPending
	s.metrics.parked.WithLabelValues(x.tenant.name).Inc() // before a waiter wakes, as in park
	x.notifyLocked()
	cancelled := x.cancelled
	x.mu.Unlock()
	s.holdForGrace(x, p) // within its grace: never written yet
	if cancelled {
		s.cancelParked(x)
		return
	}
	if s.cluster != nil {
		s.cluster.Wake(x) // its record names its bytes again
	}
}

func (x *execution) wasCancelled() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.cancelled
}

// dropSnapshot forgets x's parked bytes name once its program ran past
// them (or it settled without them): a spilled file is removed; a store's
// is deleted once x's record no longer names it (internal/cluster/records.go).
func (s *Server) dropSnapshot(x *execution, name string) {
	s.forgetSnapshot(x, name)
	s.removeSpilled(x, name)
}

// forgetSnapshot is dropSnapshot's bookkeeping: x no longer stands on
// its bytes name, nor counts them in its tenant's parked bytes.
func (s *Server) forgetSnapshot(x *execution, name string) {
	if name == "" {
		return
	}
	x.mu.Lock()
	var size int64
	if x.snapshot == name {
		x.snapshot, size, x.parkedSize = "", x.parkedSize, 0
	}
	x.answers, x.given = nil, nil
	x.mu.Unlock()
	x.tenant.quota.Parked(-size)
}

// removeSpilled is dropSnapshot's removal of a spilled file.
func (s *Server) removeSpilled(x *execution, name string) {
	if name != "" && s.spill != nil {
		if f := removeHook.Load(); f != nil {
			(*f)()
		}
		if err := s.spill.Remove(name); err != nil {
			s.log.Warn("removing a spilled snapshot failed", x.logAttrs("snapshot", name, "error", err.Error())...)
		}
	}
}

// restore rebuilds x's Parked from its bytes, name, in the store or the
// spill. It fails with retry, the answer to give, where a retry may
// succeed (the bytes could not be read now, the tenant's sessions are all
// in use), else with err.
func (s *Server) restore(ctx context.Context, x *execution, name string) (p *executor.Parked, retry *httpError, err error) {
	if name == "" {
		return nil, nil, fmt.Errorf("execution %s holds no parked state on this node and has no snapshot in a store", x.id)
	}
	rctx, cancel := context.WithTimeout(ctx, cluster.StoreTimeout)
	defer cancel()
	data, err := s.readSnapshot(rctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, fmt.Errorf("its snapshot %s is gone: %w", name, err)
	}
	if err != nil {
		return nil, unavailable(CodeStoreUnavailable, "execution %s could not resume: %v; %s", x.id, err, stillParked), nil
	}
	pf, err := decodeParkFile(data)
	if err != nil {
		return nil, nil, fmt.Errorf("its snapshot %s: %w", name, err)
	}
	if err := pf.belongsTo(x.id, x.tenant.name, name, data); err != nil {
		return nil, nil, err
	}
	p, herr, err := s.restoreFrom(x, pf)
	if herr != nil {
		herr.Body.Message = fmt.Sprintf("execution %s could not resume: %s; %s", x.id, herr.Body.Message, stillParked)
	}
	return p, herr, err
}

// readSnapshot reads parked bytes from the store, or the spill.
func (s *Server) readSnapshot(ctx context.Context, name string) ([]byte, error) {
	if err := snapshotReadFault(); err != nil {
		return nil, err
	}
	if s.cluster != nil {
		data, err := s.cluster.Store.GetSnapshot(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("reading its snapshot %s from the store: %w", name, err)
		}
		return data, nil
	}
	return s.spill.Get(ctx, name)
}

// removeHook, when set (tests: HoldSpillRemovals), is called before every
// removal of a spilled file.
var removeHook atomic.Pointer[func()]

// readFault, when set (tests: FailSnapshotReads), is asked before every
// read of parked bytes; its error stands for the read's.
var readFault atomic.Pointer[func() error]

func snapshotReadFault() error {
	if f := readFault.Load(); f != nil {
		return (*f)()
	}
	return nil
}

// executorFor builds the executor x's program continues in: the tenant's
// tools, the workspace in its workspace state, and its client tools. A
// workspace state refused for now (all in use) is herr.
func (s *Server) executorFor(x *execution) (*executor.Executor, *httpError, error) {
	t := x.tenant
	ws := t.ws
	if x.spec.Session != "" && t.sess != nil {
		sws, rs, herr := t.sess.acquire(x.spec.Session)
		if herr != nil {
			if herr.Status == http.StatusTooManyRequests {
				return nil, herr, nil
			}
			return nil, nil, fmt.Errorf("its session %q: %s", x.spec.Session, herr.Body.Message)
		}
		ws = sws
		x.mu.Lock()
		x.releasePending = chain(rs, orNothing(x.releasePending))
		x.mu.Unlock()
	}
	if ws == t.ws && len(x.spec.ClientTools) > 0 {
		ex, err := s.clientExecutor(s.runContext(x), t, x.spec.ClientTools) // clienttool_cache.go
		return ex, nil, err
	}
	ex, err := s.executorWith(s.runContext(x), t, ws, s.clientTools(t, x.spec.ClientTools)) // hostwork.go: charged to t
	return ex, nil, err
}

func orNothing(f func()) func() {
	if f == nil {
		return func() {}
	}
	return f
}

// failParked settles a parked execution that cannot resume (its parked
// count was taken off already), and drops its bytes, name.
func (s *Server) failParked(x *execution, name string, err error) {
	s.log.Warn("a parked execution could not resume", x.logAttrs("tenant", x.tenant.name, "snapshot", name, "error", err.Error())...)
	s.dropSnapshot(x, name)
	s.settleRun(x, api.Result{ID: x.id, Tool: registry.RunCode, Err: &api.Error{Code: api.CodeInternal,
		Message: "the parked execution could not resume: " + err.Error()}})
}

// cancelledWhileParked is the result of a parked execution cancelled
// (DELETE).
func cancelledWhileParked(id string) api.Result {
	return api.Result{ID: id, Tool: registry.RunCode, Err: &api.Error{Code: api.CodeCodeRunFailed, Kind: api.KindAbort,
		Message: "the run was cancelled while it was parked, waiting on its client"}}
}

// cancelParked settles a parked x as cancelled (DELETE): the program is
// discarded where it is held, its bytes are left to the record's expiry.
// It reports false for an x that is not parked.
func (s *Server) cancelParked(x *execution) bool {
	x.mu.Lock()
	if !x.parkedLocked() {
		x.mu.Unlock()
		return false
	}
	p, name := x.parked, x.snapshot
	x.resuming, x.parked = true, nil
	if x.expiry != nil {
		x.expiry.Stop()
		x.expiry = nil
	}
	x.mu.Unlock()
	s.metrics.parked.WithLabelValues(x.tenant.name).Dec()
	r := cancelledWhileParked(x.id)
	if p == nil && name != "" && s.mayResume(x) == nil {
		// Spilled, or past its grace on a store: restore it to discard
		// it, so that the executor's observers see the execution end.
		restored, retry, err := s.restore(context.Background(), x, name)
		if retry != nil {
			err = retry
		}
		if err != nil {
			s.log.Warn("restoring a parked execution's bytes to cancel it failed", x.logAttrs("error", err)...)
		}
		p = restored
	}
	if p != nil {
		r = p.Discard(context.Background())
	}
	s.dropSnapshot(x, name)
	s.settleRun(x, r)
	return true
}

// releaseParked gives up every Parked this node holds, without settling
// them: their state stays in the store, for the next life of this node or
// another to continue. Without a store there is nothing to keep them.
func (s *Server) releaseParked() (n int) {
	for _, x := range s.table.Live() {
		x.mu.Lock()
		if x.parkedLocked() {
			if x.expiry != nil {
				x.expiry.Stop()
				x.expiry = nil
			}
			if x.parked != nil {
				x.parked.Release()
				x.parked = nil
			}
			x.resuming, x.released = true, true // nothing here resumes or writes it any more
			n++
		}
		size := x.parkedSize // its bytes are the node's that takes it over now
		x.parkedSize = 0
		x.mu.Unlock()
		x.tenant.quota.Parked(-size)
		if s.cluster != nil && x.isReleased() {
			s.cluster.GiveUp(x.id)
		}
	}
	return n
}

func (x *execution) isReleased() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.released
}

// stopping is the answer for an execution this node gave up as it stops.
func stopping(id string) *httpError {
	e := errorf(CodeOwnerUnavailable, "execution %s is parked in the store and this node is stopping: retry (the node that takes it over continues it)", id)
	e.RetryAfter = DefaultRetryAfter
	return e
}

// parkedState is what x's record says of its parked bytes: their name in
// the store and the answers given since it parked (JSON, by parked call
// id; nil for none), while it is parked or resuming on them (a resume that
// cannot start leaves it parked on them); "", nil otherwise.
func (x *execution) parkedState() (snapshot string, answers json.RawMessage) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.snapshot == "" || !(x.parkedLocked() || x.resuming && !x.settledLocked()) {
		return "", nil
	}
	if len(x.given) > 0 {
		answers, _ = json.Marshal(x.given)
	}
	return x.snapshot, answers
}

// snapshotName is the name of x's parked bytes in the store, "" unless
// parked there.
func (x *execution) snapshotName() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.parkedLocked() {
		return ""
	}
	return x.snapshot
}
