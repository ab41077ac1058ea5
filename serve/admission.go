package serve

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
)

// Admission. Every way a tenant starts work — an execution (with or
// without keep_state), a direct call (/v1/calls), a tools/call over /mcp,
// and a parked execution resuming — is admitted by Server.admit, against
// the same bounds in the same order, with the same reasons, and holds
// what it took in one ticket, given back through the ticket: the run's
// part (its concurrent slot, its memory share, its compute reservation)
// when the run ends or parks, the pending reservation when the execution
// settles. docs/service.md, "Admission and quotas", lists the bounds; docs/security.md,
// "Tenant isolation", what each protects.

// work is what a request asks its tenant to admit.
type work struct {
	// memory is the guest memory the run commits in the sandbox (its memory
	// limit), held against the tenant's memory share; 0 for a direct call
	// of a tool that runs no program.
	memory int64
	// compute is the run's compute limit, reserved from the tenant's
	// compute bucket until the run ends; 0 for a direct call of a tool
	// that runs no program.
	compute time.Duration
	// client is an execution that may wait on its client (it declared
	// client tools): it takes one of the tenant's max_pending, and is
	// refused while the tenant's parked bytes are at their quota.
	client bool
	// resume is a parked execution resuming: it is not refused while the
	// server drains (answering pending calls still works then), and holds
	// its pending reservation already.
	resume bool
}

// quota is a tenant's share of what the server's tenants share, and what
// it holds of each now. Its fields are guarded by mu.
type quota struct {
	maxConcurrent int
	maxPending    int
	memoryShare   int64 // bytes of committed guest memory
	maxParked     int64 // bytes of parked snapshots
	maxStreams    int
	maxRetained   int64 // bytes of results and events (retained.go)

	mu      sync.Mutex
	live    int   // runs and direct calls admitted, against maxConcurrent
	memory  int64 // committed by the admitted runs, against memoryShare
	parked  int64 // bytes of this tenant's parked snapshots (spill or store)
	streams int   // open event streams

	retainedLive    int64 // bytes of the live executions' events (retained.go)
	retainedSettled int64 // bytes of the settled executions the table holds
}

// ticket is admitted work's hold on its tenant's quotas. endRun and
// release are idempotent; a ticket is safe for concurrent use.
type ticket struct {
	s    *Server
	t    *tenant
	w    work
	once sync.Once // the run's part
	mu   sync.Mutex
	pend func() // the max_pending reservation, until taken or released
}

// admit admits w for t, or refuses it: 503 DRAINING while the server
// drains (not a resume), then 429 QUOTA_EXCEEDED with the first bound it
// is past, in this order: max_concurrent, max_pending, compute_seconds,
// memory_share, parked_bytes. A refusal is counted in the metrics and
// takes nothing.
func (s *Server) admit(t *tenant, w work) (*ticket, *httpError) {
	k, herr := s.tryAdmit(t, w)
	if herr != nil {
		reason := herr.body.Reason
		if herr.body.Code == CodeDraining {
			reason = "draining"
		}
		s.metrics.rejections.WithLabelValues(t.name, reason).Inc()
	}
	return k, herr
}

func (s *Server) tryAdmit(t *tenant, w work) (*ticket, *httpError) {
	if !w.resume && s.draining.Load() {
		return nil, draining()
	}
	q := &t.quota
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.live >= q.maxConcurrent {
		return nil, quotaError(ReasonMaxConcurrent, "tenant %s has %d executions and calls in flight, its quota (quotas.max_concurrent); retry after one settles", t.name, q.maxConcurrent)
	}
	var pend func()
	if w.client && !w.resume {
		rp, ok := s.pending.reserve(t.name, q.maxPending)
		if !ok {
			return nil, quotaError(ReasonMaxPending, "tenant %s has %d executions with client tools live, its quota (quotas.max_pending); answer or cancel one first", t.name, q.maxPending)
		}
		pend = rp
	}
	refuse := func(e *httpError) (*ticket, *httpError) {
		if pend != nil {
			pend()
		}
		return nil, e
	}
	if t.compute != nil {
		if ok, wait := t.compute.reserve(w.compute); !ok {
			e := quotaError(ReasonCompute, "tenant %s has used its %g compute seconds per minute (quotas.compute_seconds_per_minute), the runs in flight included; retry in %v", t.name, t.compute.rate, wait.Round(time.Millisecond))
			e.retryAfter = max(wait, time.Second)
			return refuse(e)
		}
	}
	if w.memory > 0 && q.memory+w.memory > q.memoryShare {
		if t.compute != nil {
			t.compute.unreserve(w.compute)
		}
		return refuse(quotaError(ReasonMemoryShare, "tenant %s has %d MiB of guest memory committed by its runs in flight; this run's %d MiB would pass its share of %d MiB (quotas.max_memory_mb); retry after one settles, or ask for less (limits.memory_mb)",
			t.name, q.memory>>20, w.memory>>20, q.memoryShare>>20))
	}
	if w.client && !w.resume && q.parked >= q.maxParked {
		if t.compute != nil {
			t.compute.unreserve(w.compute)
		}
		return refuse(quotaError(ReasonParkedBytes, "tenant %s has %d MiB of parked executions' snapshots, its quota (quotas.max_parked_bytes); answer or cancel parked executions first",
			t.name, q.parked>>20))
	}
	q.live++
	q.memory += w.memory
	s.metrics.memoryCommitted.WithLabelValues(t.name).Set(float64(q.memory))
	return &ticket{s: s, t: t, w: w, pend: pend}, nil
}

// endRun gives back the run's part: its concurrent slot, its memory and
// its compute reservation (what it used is charged to the bucket as it
// ran). It is what a run does as it ends or parks.
func (k *ticket) endRun() {
	k.once.Do(func() {
		q := &k.t.quota
		q.mu.Lock()
		q.live--
		q.memory -= k.w.memory
		k.s.metrics.memoryCommitted.WithLabelValues(k.t.name).Set(float64(q.memory))
		q.mu.Unlock()
		if k.t.compute != nil {
			k.t.compute.unreserve(k.w.compute)
		}
	})
}

// takePending hands the pending reservation to the execution, which gives
// it back as it settles (nil: none).
func (k *ticket) takePending() func() {
	k.mu.Lock()
	defer k.mu.Unlock()
	p := k.pend
	k.pend = nil
	return p
}

// release gives back everything the ticket still holds: work refused
// after it was admitted, or a run that never started.
func (k *ticket) release() {
	k.endRun()
	if p := k.takePending(); p != nil {
		p()
	}
}

// draining is the answer to new work while the server drains.
func draining() *httpError {
	e := errorf(CodeDraining, "the server is draining (shutting down) and accepts no new work; retry on another instance")
	e.retryAfter = DefaultRetryAfter
	return e
}

// runWork is the work of one run of t's with the limits a request asked
// for (nil: the tenant's), lowered to the tenant's and given their
// defaults: what the sandbox will commit and reserve for it.
func (t *tenant) runWork(req *RunLimits) work {
	var asked api.Limits
	if req != nil {
		asked = req.api()
	}
	// A negative field is refused where it is read (the request's decoder,
	// run_code's arguments); here it asks for nothing.
	asked.ComputeTime, asked.MemoryBytes = max(asked.ComputeTime, 0), max(asked.MemoryBytes, 0)
	l := asked.Within(t.limits).WithDefaults()
	return work{memory: l.MemoryBytes, compute: l.ComputeTime}
}

// memoryShareOf is a tenant's share of the sandbox's committed guest
// memory: quotas.max_memory_mb when set; else the sandbox's cap divided by
// the number of tenants, never less than two runs at the tenant's memory
// limit (so that one tenant's run never waits for its own share while
// another runs); without a cap known (a sandbox that does not report its
// usage), no share.
func memoryShareOf(tc TenantConfig, limits api.Limits, sandboxCap int64, tenants int) int64 {
	if tc.Quotas.MaxMemoryMB > 0 {
		return tc.Quotas.MaxMemoryMB << 20
	}
	if sandboxCap <= 0 {
		return 1<<63 - 1
	}
	return max(sandboxCap/int64(tenants), 2*limits.WithDefaults().MemoryBytes)
}

// parkedBytes moves tenant t's parked bytes by delta (a snapshot written,
// or deleted once its execution ran or settled).
func (s *Server) parkedBytes(t *tenant, delta int64) {
	q := &t.quota
	q.mu.Lock()
	q.parked += delta
	n := q.parked
	q.mu.Unlock()
	s.metrics.parkedBytes.WithLabelValues(t.name).Set(float64(n))
}

// parkRoom reports whether t may park now: while its parked bytes are
// below its quota, so that the quota is passed by one snapshot at most
// (as the compute quota by one run's limit), and an execution admitted
// while the tenant was below it parks when its turn comes.
func (t *tenant) parkRoom() bool {
	q := &t.quota
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.parked < q.maxParked
}

// openStream takes one of t's event streams (429 max_streams past its
// quota); close it when the stream ends.
func (s *Server) openStream(t *tenant) (func(), *httpError) {
	q := &t.quota
	q.mu.Lock()
	if q.streams >= q.maxStreams {
		q.mu.Unlock()
		e := quotaError(ReasonMaxStreams, "tenant %s has %d event streams open, its quota (quotas.max_streams); close one first", t.name, q.maxStreams)
		s.metrics.rejections.WithLabelValues(t.name, ReasonMaxStreams).Inc()
		return nil, e
	}
	q.streams++
	s.metrics.streams.WithLabelValues(t.name).Set(float64(q.streams))
	q.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			q.streams--
			s.metrics.streams.WithLabelValues(t.name).Set(float64(q.streams))
			q.mu.Unlock()
		})
	}, nil
}

// callWork is the work of a direct call: a run_code call runs a program
// with the limits its arguments ask for (arguments the executor will
// refuse ask for none: the tenant's, an upper bound); any other tool
// runs none.
func (t *tenant) callWork(name string, args json.RawMessage) work {
	if name != registry.RunCode {
		return work{}
	}
	var a struct {
		Limits *RunLimits `json:"limits"`
	}
	if json.Unmarshal(args, &a) != nil {
		a.Limits = nil
	}
	return t.runWork(a.Limits)
}
