package serve

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/text"
	"github.com/ptcx/ptcx/serve/internal/quota"
)

// execution is one POST /v1/executions: its program runs on its own
// goroutine; handlers read its state and wait for it to change.
type execution struct {
	id      string
	tenant  *tenant
	created time.Time
	key     string // idempotency key, "" for none
	// requestID is the id of the request that started it (X-Request-ID),
	// "" for one taken over or started from the cluster's queue.
	requestID string
	sum       [32]byte // the request body's hash, for the idempotency check
	cancel    context.CancelFunc
	client    bool       // declared client tools (counted against max_pending)
	asks      bool       // its program may ask for approvals (approval.go; counted against max_pending too)
	work      quota.Work // what each of its runs is admitted as (admission.go); zero: the tenant's defaults
	// live is set once the execution must wait for its client live, never
	// parked (its tenant's parked bytes are at their quota: waitLive).
	live atomic.Bool
	// epoch is the cluster lease epoch it runs under on this node (serve/internal/fence);
	// 0 without a store, and once another node took it.
	epoch atomic.Uint64

	mu        sync.Mutex
	status    string
	changed   chan struct{} // closed (and replaced) at every change
	result    api.Result
	settledAt time.Time
	pending   []*pendingCall // unanswered client-side calls, in call order
	waiting   []*pendingCall // a live wait's calls, until it is answered or parks (livewait.go)
	// adoptable are a live wait's calls taken over by waitLive, by call
	// id, until the resumed program's client tool body adopts them
	// (adoptPending): one answered in between has left pending with its
	// result in its channel, which the body must still find.
	adoptable map[string]*pendingCall
	calls     []CallRecord
	callCount int
	events    []Event
	dropped   int   // events over max_events or the retained bytes, counted not kept
	bytes     int64 // retained bytes (retained.go): its events', and once filed settled its result's
	filed     bool  // filed settled in the table: bytes are counted as the tenant's settled ones
	maxEvents int
	eventBase int // events numbered before this node took it over (park.go)
	cancelled bool

	// Parking (park.go): set while the program is parked on its client.
	spec           parkSpec                  // what rebuilds its executor elsewhere
	parked         *executor.Parked          // held on this node; nil once given up
	snapshot       string                    // the store's name of its bytes; "" without a store
	parkedAt       time.Time                 // when it parked: its calls' expiry counts from it
	parkedSize     int64                     // their size, counted in its tenant's parked bytes
	answers        map[int32]executor.Answer // results given while parked, by parked call id
	given          map[int32]ToolResult      // the same, as the client posted them (the record keeps them)
	expiry         *time.Timer               // answers expired calls
	resuming       bool                      // a resume was started and has not parked or settled
	released       bool                      // given up by this node (stopping): its store state is another's to continue
	releasePending func()                    // the pending quota's reservation, released at settlement

	// decided are the approvals decided so far, by pending call id: a
	// decision posted again is a no-op, a different one 409 (approval.go).
	decided map[string]Decision
}

// pendingCall is a client-side call waiting for its result.
type pendingCall struct {
	call    PendingCall
	expires time.Time
	answer  chan ToolResult // buffered 1; written once, by the first result; nil for a parked call or an approval
	parkID  int32           // its id in the parked program (executor.ParkedCall.ID); 0 for a live call
	// decision, for a live approval (liveApprover), is buffered 1 and
	// written once, by the decision; nil otherwise.
	decision chan Decision
}

// newID mints an execution's id: "ex_" and 24 random hex digits.
func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "ex_" + hex.EncodeToString(b[:])
}

func newExecution(id string, t *tenant, body []byte, key string, client bool, maxEvents int) *execution {
	return &execution{
		id: id, tenant: t, created: time.Now(), key: key, sum: sha256.Sum256(body), client: client,
		status: StatusRunning, changed: make(chan struct{}), maxEvents: maxEvents,
	}
}

// notifyLocked wakes every waiter; x.mu is held.
func (x *execution) notifyLocked() {
	close(x.changed)
	x.changed = make(chan struct{})
}

// emitLocked appends an event, and reports false when it was dropped
// instead (past max_events); x.mu is held.
func (x *execution) emitLocked(typ string, data any) bool {
	if x.eventBase+len(x.events) >= x.maxEvents && typ != EventDone {
		x.dropped++
		return false
	}
	b, err := json.Marshal(data)
	if err != nil {
		b = json.RawMessage(`{}`)
	}
	if n := eventBytes(b); !x.filed && typ != EventDone { // filed: counted with its result (retained.go)
		if !x.retained().ChargeEvent(n) { // past the tenant's retained bytes
			x.dropped++
			return false
		}
		x.bytes += int64(n)
	}
	x.events = append(x.events, Event{ID: x.eventBase + len(x.events) + 1, Type: typ, Data: b})
	return true
}

func (x *execution) emit(typ string, data any) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.emitLocked(typ, data)
	x.notifyLocked()
}

// maxLogEventBytes bounds the line a log event carries; the result's logs
// keep it whole (within the run's output limit).
const maxLogEventBytes = 2048

// logEvent is a log event's data: the line, cut to maxLogEventBytes (at a
// character boundary), and whether it was.
type logEvent struct {
	Line      string `json:"line"`
	Truncated bool   `json:"truncated,omitempty"`
}

// logLine is the run's wasmhost.LogHook: each console line becomes a log
// event as the program writes it. It never waits on anything but x.mu,
// which is never held across a call into the run; a line written after
// the execution settled (a guest outliving its run) is dropped. Past
// max_events a line is only counted: the waiters are not woken for it, so
// a program printing in a loop costs the streams and the store nothing.
func (x *execution) logLine(line string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.settledLocked() {
		return
	}
	cut := text.Truncate(line, maxLogEventBytes)
	if x.emitLocked(EventLog, logEvent{Line: cut, Truncated: len(cut) < len(line)}) {
		x.notifyLocked()
	}
}

// callStarted and callFinished come from the executor's hooks.
func (x *execution) callStarted(id, tool string) {
	x.emit(EventCallStarted, map[string]string{"id": id, "tool": tool})
}

func (x *execution) callFinished(id, tool string, r api.Result, d time.Duration) {
	rec := CallRecord{ID: id, Tool: tool, OK: r.OK(), DurationMS: float64(d.Microseconds()) / 1e3}
	if r.Err != nil {
		rec.Code = string(r.Err.Code)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.callCount++
	if len(x.calls) < x.maxEvents {
		x.calls = append(x.calls, rec)
	}
	x.emitLocked(EventCallFinished, rec)
	x.notifyLocked()
}

// addPending records a client-side call and turns the execution pending.
func (x *execution) addPending(pc *pendingCall) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.pending = append(x.pending, pc)
	x.status = StatusPending
	x.emitPendingLocked(pc)
	x.notifyLocked()
}

// removePending forgets a call once its body returns (answered, expired or
// cancelled); the execution runs again when none is left.
func (x *execution) removePending(pc *pendingCall) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, p := range x.pending {
		if p == pc {
			x.pending = append(x.pending[:i], x.pending[i+1:]...)
			break
		}
	}
	if len(x.pending) == 0 && x.status == StatusPending {
		x.status = StatusRunning
	}
	x.notifyLocked()
}

// deliver hands results to their pending calls; unknown and repeated ids
// are no-ops. It reports how many it delivered, and whether the execution
// is parked with every call answered now: the caller resumes it. A result
// for an approval (pending, or decided and not pending as a tool since) is
// refused, nothing delivered: 400.
func (x *execution) deliver(results []ToolResult) (int, bool, *httpError) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, r := range results {
		// An approved call of a client tool is then the client's, under the
		// same id: pending as a tool, it takes a result.
		_, decided := x.decided[r.ID]
		if pc := x.pendingByIDLocked(r.ID); (pc == nil && decided) || (pc != nil && pc.isApproval()) {
			return 0, false, errorf(CodeBadRequest, "%s is an approval, not a client tool's call: decide it with POST /v1/executions/%s/approvals", r.ID, x.id)
		}
	}
	n := 0
	for _, r := range results {
		for i, p := range x.pending {
			if p.call.ID != r.ID {
				continue
			}
			if p.answer != nil {
				p.answer <- r // buffered, and a call leaves pending when answered: never blocks
			} else {
				x.answerParkedLocked(p, r)
			}
			x.pending = append(x.pending[:i], x.pending[i+1:]...)
			n++
			x.emitLocked(EventResult, map[string]any{"id": r.ID, "ok": r.OK})
			break
		}
	}
	due := x.resumeDueLocked()
	if n > 0 {
		if len(x.pending) == 0 && x.status == StatusPending && !due {
			x.status = StatusRunning
		}
		x.notifyLocked()
	}
	return n, due, nil
}

// stampSettled records when x settles, before the table files it
// (Server.file).
func (x *execution) stampSettled(at time.Time) {
	x.mu.Lock()
	x.settledAt = at
	x.mu.Unlock()
}

// settle publishes x's result (stampSettled came first).
func (x *execution) settle(r api.Result) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.result, x.pending = r, nil
	x.status = StatusCompleted
	if !r.OK() {
		x.status = StatusFailed
	}
	x.emitLocked(EventDone, map[string]any{"status": x.status, "dropped_events": x.dropped})
	x.notifyLocked()
}

// ID, Tenant, Key and Settled are what the table reads of x
// (serve/internal/table.Entry); the cluster reads them too, and Created,
// Sum, Epoch, SetEpoch and SessionWait.
func (x *execution) ID() string     { return x.id }
func (x *execution) Tenant() string { return x.tenant.name }
func (x *execution) Key() string    { return x.key }

// Created is when x was accepted; Sum the SHA-256 of its request body.
func (x *execution) Created() time.Time { return x.created }
func (x *execution) Sum() [32]byte      { return x.sum }

// Epoch is the cluster lease epoch x runs under on this node, 0 for none
// (serve/internal/fence); SetEpoch sets it.
func (x *execution) Epoch() uint64     { return x.epoch.Load() }
func (x *execution) SetEpoch(e uint64) { x.epoch.Store(e) }

// SessionWait is the longest x's start may wait for a keep_state
// session's turn: its tenant's tenants[].sessions.wait_ms.
func (x *execution) SessionWait() time.Duration { return x.tenant.state.wait }

func (x *execution) Settled() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.settledLocked()
}

func (x *execution) settledLocked() bool {
	return x.status == StatusCompleted || x.status == StatusFailed
}

// state is the execution as the API shows it.
func (x *execution) state() ExecutionState {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.stateLocked()
}

func (x *execution) stateLocked() ExecutionState {
	st := ExecutionState{ID: x.id, Status: x.status}
	switch x.status {
	case StatusPending:
		var first time.Time
		for _, p := range x.pending {
			st.Pending = append(st.Pending, p.call)
			if first.IsZero() || p.expires.Before(first) {
				first = p.expires
			}
		}
		if !first.IsZero() {
			st.ExpiresAt = &first
		}
	case StatusCompleted, StatusFailed:
		r := x.result
		st.Text = r.Text
		st.Stats = &Stats{DurationMS: float64(x.settledAt.Sub(x.created).Microseconds()) / 1e3, Calls: x.callCount}
		if l := r.Ledger; l != nil {
			st.Stats.ComputeMS, st.Stats.MemoryBytes = l.Stats.ComputeMS, l.Stats.MemoryBytes
		}
		st.Calls = append([]CallRecord(nil), x.calls...)
		if !r.Labels.IsZero() {
			l := r.Labels
			st.Labels = &l
		}
		if r.OK() {
			var v struct {
				Logs   []string        `json:"logs"`
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal(r.Value, &v) == nil {
				st.Logs, st.Value = v.Logs, v.Result
			}
			st.Handles = r.Handles
		} else {
			st.Error = errorBody(r.Err)
			st.Logs = r.Err.Logs
		}
	}
	return st
}

// wait blocks until the execution is no longer running (pending or
// settled), d passes, or ctx ends; then it returns the state.
func (x *execution) wait(ctx context.Context, d time.Duration) ExecutionState {
	return x.waitFor(ctx, d, func() bool { return x.status != StatusRunning })
}

// waitSettled waits for settlement only (a cancelled execution may pass
// through pending on its way out).
func (x *execution) waitSettled(ctx context.Context, d time.Duration) ExecutionState {
	return x.waitFor(ctx, d, x.settledLocked)
}

// waitFor blocks until done (called with x.mu held) holds, d passes, or
// ctx ends; then it returns the state.
func (x *execution) waitFor(ctx context.Context, d time.Duration, done func() bool) ExecutionState {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		x.mu.Lock()
		if done() {
			st := x.stateLocked()
			x.mu.Unlock()
			return st
		}
		ch := x.changed
		x.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			return x.state()
		case <-ctx.Done():
			return x.state()
		}
	}
}

// eventsAfter returns the events after id, whether the execution is done,
// and a channel closed at the next change.
func (x *execution) eventsAfter(id int) ([]Event, bool, <-chan struct{}) {
	x.mu.Lock()
	defer x.mu.Unlock()
	i := max(id-x.eventBase, 0)
	var out []Event
	if i < len(x.events) {
		out = append(out, x.events[i:]...)
	}
	return out, x.settledLocked(), x.changed
}

// logAttrs are a log line's attributes about x: its id and, when a request
// started it, that request's id (start_request_id: the X-Request-ID an
// operator finds in the request's own line), then args. Lines written
// after the request that started it was answered (parked, spilled, settled)
// are found by either.
func (x *execution) logAttrs(args ...any) []any {
	a := make([]any, 0, len(args)+4)
	a = append(a, "execution", x.id)
	if x.requestID != "" {
		a = append(a, "start_request_id", x.requestID)
	}
	return append(a, args...)
}
