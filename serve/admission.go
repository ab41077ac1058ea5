package serve

import (
	"encoding/json"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/serve/internal/compute"
	"github.com/ptcx/ptcx/serve/internal/quota"
)

// Admission. Every way a tenant starts work — an execution (with or
// without keep_state), a direct call (/v1/calls), a tools/call over /mcp,
// and a parked execution resuming — is admitted by Server.admit, against
// the same bounds in the same order, with the same reasons, and holds
// what it took in one ticket (quota.Ticket), given back through the
// ticket: the run's part (its concurrent slot, its memory share, its
// compute reservation) when the run ends or parks, the pending reservation
// when the execution settles. The counting is the tenant's quota.Quota
// (serve/internal/quota); this file words its refusals. docs/service.md,
// "Quotas", lists the bounds; docs/security.md, "Tenant isolation", what
// each protects.

// admit admits w for t, or refuses it: 503 DRAINING while the server
// drains (not a resume), then 429 QUOTA_EXCEEDED with the first bound it
// is past, in this order: max_concurrent, max_pending, compute_seconds,
// memory_share, parked_bytes. A refusal is counted in the metrics and
// takes nothing.
func (s *Server) admit(t *tenant, w quota.Work) (*quota.Ticket, *httpError) {
	if !w.Resume && s.draining.Load() {
		s.metrics.rejections.WithLabelValues(t.name, "draining").Inc()
		return nil, draining()
	}
	k, r := t.quota.Admit(w)
	if r != nil {
		herr := t.refusal(r, w)
		s.metrics.rejections.WithLabelValues(t.name, herr.Body.Reason).Inc()
		return nil, herr
	}
	return k, nil
}

// refusal is the answer to w refused by t's quota, r.
func (t *tenant) refusal(r *quota.Refusal, w quota.Work) *httpError {
	l := t.quota.Limits()
	switch r.Bound {
	case quota.MaxConcurrent:
		return quotaError(ReasonMaxConcurrent, "tenant %s has %d executions and calls in flight, its quota (quotas.max_concurrent); retry after one settles", t.name, l.MaxConcurrent)
	case quota.MaxPending:
		return quotaError(ReasonMaxPending, "tenant %s has %d executions with client tools live, its quota (quotas.max_pending); answer or cancel one first", t.name, l.MaxPending)
	case quota.Compute:
		e := quotaError(ReasonCompute, "tenant %s has used its %g compute seconds per minute (quotas.compute_seconds_per_minute), the runs in flight included; retry in %v", t.name, t.compute.Rate(), r.Wait.Round(time.Millisecond))
		e.RetryAfter = max(r.Wait, time.Second)
		return e
	case quota.MemoryShare:
		return quotaError(ReasonMemoryShare, "tenant %s has %d MiB of guest memory committed by its runs in flight; this run's %d MiB would pass its share of %d MiB (quotas.max_memory_mb); retry after one settles, or ask for less (limits.memory_mb)",
			t.name, r.Held>>20, w.Memory>>20, l.MemoryShare>>20)
	case quota.ParkedBytes:
		return quotaError(ReasonParkedBytes, "tenant %s has %d MiB of parked executions' snapshots, its quota (quotas.max_parked_bytes); answer or cancel parked executions first",
			t.name, r.Held>>20)
	default: // quota.MaxStreams
		return quotaError(ReasonMaxStreams, "tenant %s has %d event streams open, its quota (quotas.max_streams); close one first", t.name, l.MaxStreams)
	}
}

// draining is the answer to new work while the server drains.
func draining() *httpError {
	e := errorf(CodeDraining, "the server is draining (shutting down) and accepts no new work; retry on another instance")
	e.RetryAfter = DefaultRetryAfter
	return e
}

// runWork is the work of one run of t's with the limits a request asked
// for (nil: the tenant's), lowered to the tenant's and given their
// defaults: what the sandbox will commit and reserve for it.
func (t *tenant) runWork(req *RunLimits) quota.Work {
	var asked api.Limits
	if req != nil {
		asked = req.Limits()
	}
	// A negative field is refused where it is read (the request's decoder,
	// run_code's arguments); here it asks for nothing.
	asked.ComputeTime, asked.MemoryBytes = max(asked.ComputeTime, 0), max(asked.MemoryBytes, 0)
	l := asked.Within(t.limits).WithDefaults()
	return quota.Work{Memory: l.MemoryBytes, Compute: l.ComputeTime}
}

// quotasOf builds tenant tc's quotas, limits its run limits: its compute
// bucket (nil without quotas.compute_seconds_per_minute), its shares of
// what the tenants share, and its retained bytes, each with its defaults
// and shown on its metrics.
func (s *Server) quotasOf(tc TenantConfig, limits api.Limits) (*compute.Bucket, *quota.Quota, *quota.Retained) {
	var b *compute.Bucket
	if r := tc.Quotas.ComputeSecondsPerMinute; r > 0 {
		b = compute.New(r, DefaultRetryAfter, time.Now)
	}
	q := quota.New(quota.Limits{
		MaxConcurrent: int(orDefault(int64(tc.Quotas.MaxConcurrent), DefaultMaxConcurrent)),
		MaxPending:    int(orDefault(int64(tc.Quotas.MaxPending), DefaultMaxPending)),
		MemoryShare:   memoryShareOf(tc, limits, s.sandboxCap(), len(s.cfg.Tenants)),
		MaxParked:     orDefault(tc.Quotas.MaxParkedBytes, DefaultMaxParkedBytes),
		MaxStreams:    int(orDefault(int64(tc.Quotas.MaxStreams), DefaultMaxStreams)),
	}, b, quota.Gauges{
		Memory:  s.metrics.memoryCommitted.WithLabelValues(tc.Name),
		Parked:  s.metrics.parkedBytes.WithLabelValues(tc.Name),
		Streams: s.metrics.streams.WithLabelValues(tc.Name),
	})
	r := quota.NewRetained(orDefault(tc.Quotas.MaxRetainedBytes, DefaultMaxRetainedBytes), s.metrics.retainedBytes.WithLabelValues(tc.Name))
	return b, q, r
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

// openStream takes one of t's event streams (429 max_streams past its
// quota); close it when the stream ends.
func (s *Server) openStream(t *tenant) (func(), *httpError) {
	closeStream, r := t.quota.OpenStream()
	if r != nil {
		s.metrics.rejections.WithLabelValues(t.name, ReasonMaxStreams).Inc()
		return nil, t.refusal(r, quota.Work{})
	}
	return closeStream, nil
}

// callWork is the work of a direct call: a run_code call runs a program
// with the limits its arguments ask for (arguments the executor will
// refuse ask for none: the tenant's, an upper bound); any other tool
// runs none.
func (t *tenant) callWork(name string, args json.RawMessage) quota.Work {
	if name != registry.RunCode {
		return quota.Work{}
	}
	var a struct {
		Limits *RunLimits `json:"limits"`
	}
	if json.Unmarshal(args, &a) != nil {
		a.Limits = nil
	}
	return t.runWork(a.Limits)
}
