package serve

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the service's Prometheus metrics, on a registry of the
// Server's own. Labels are bounded: tenant (from the config), outcome,
// reason, route (the pattern) and status class.
type metrics struct {
	reg          *prometheus.Registry
	executions   *prometheus.CounterVec   // tenant, outcome
	duration     *prometheus.HistogramVec // tenant, outcome
	running      *prometheus.GaugeVec     // tenant
	pendingCalls *prometheus.GaugeVec     // tenant
	rejections   *prometheus.CounterVec   // tenant, reason
	nested       *prometheus.CounterVec   // tenant, outcome
	requests     *prometheus.CounterVec   // route, code
	compute      *prometheus.CounterVec   // tenant
	parked       *prometheus.GaugeVec     // tenant
	releases     prometheus.Counter       // idle.go
	// What each tenant holds of what the tenants share (admission.go).
	memoryCommitted *prometheus.GaugeVec   // tenant
	parkedBytes     *prometheus.GaugeVec   // tenant
	retainedBytes   *prometheus.GaugeVec   // tenant
	streams         *prometheus.GaugeVec   // tenant
	idleParks       *prometheus.CounterVec // tenant
	spills          *prometheus.CounterVec // tenant
	liveWaits       *prometheus.CounterVec // tenant, outcome (answered, parked, full)
}

func newMetrics(held func() int) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		executions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ptcx_executions_total", Help: "Settled executions by tenant and outcome (completed, failed).",
		}, []string{"tenant", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ptcx_execution_duration_seconds", Help: "Time from accepting an execution to its settlement, waits on client tools included.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"tenant", "outcome"}),
		running: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ptcx_executions_live", Help: "Executions accepted and not settled (running or pending).",
		}, []string{"tenant"}),
		pendingCalls: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ptcx_pending_calls", Help: "Client-side calls waiting for their result.",
		}, []string{"tenant"}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ptcx_rejections_total", Help: "Requests refused by a quota or by draining, by reason.",
		}, []string{"tenant", "reason"}),
		nested: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ptcx_nested_calls_total", Help: "Settled nested tool calls of programs, by outcome (ok or the error code).",
		}, []string{"tenant", "outcome"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ptcx_http_requests_total", Help: "HTTP requests by route pattern and status code.",
		}, []string{"route", "code"}),
		compute: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ptcx_compute_seconds_total", Help: "Guest CPU seconds used by programs (waits on tools excluded), and the host's wall time compiling client tool schemas and decoding tool results for them.",
		}, []string{"tenant"}),
	}
	m.releases = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ptcx_idle_memory_releases_total", Help: "Times the service, idle, returned the memory its last load left free to the OS.",
	})
	m.parked = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ptcx_executions_parked", Help: "Executions parked on this node, waiting on their client with no instance or goroutine.",
	}, []string{"tenant"})
	m.memoryCommitted = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ptcx_committed_memory_bytes", Help: "Guest memory committed by the tenant's runs in flight, against its share (quotas.max_memory_mb).",
	}, []string{"tenant"})
	m.parkedBytes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ptcx_parked_bytes", Help: "Bytes of the tenant's parked executions' snapshots on this node's spill directory or in the store (quotas.max_parked_bytes).",
	}, []string{"tenant"})
	m.retainedBytes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ptcx_retained_bytes", Help: "Bytes of results and events the tenant's executions hold on this node, live and settled (quotas.max_retained_bytes).",
	}, []string{"tenant"})
	m.streams = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ptcx_event_streams", Help: "Event streams the tenant has open on this node (quotas.max_streams).",
	}, []string{"tenant"})
	m.idleParks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ptcx_idle_parks_total", Help: "Times the tenant's programs, only waiting past the grace (100 ms), were parked and gave their instance and committed memory back to the sandbox.",
	}, []string{"tenant"})
	m.spills = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ptcx_spills_total", Help: "Times the tenant's executions parked on their client tools outlived server.park_grace_ms and their bytes were written to the spill directory.",
	}, []string{"tenant"})
	m.liveWaits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ptcx_live_waits_total", Help: "Times the tenant's executions came to wait only on their client tools, by outcome: answered within server.live_wait_ms (continued live), parked after it, or parked at once (full: quotas.max_live_waits reached).",
	}, []string{"tenant", "outcome"})
	held_ := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ptcx_pending_executions_held", Help: "Executions with client tools counted against their tenant's max_pending (parked or live).",
	}, func() float64 { return float64(held()) })
	m.reg.MustRegister(m.executions, m.duration, m.running, m.pendingCalls, m.rejections, m.nested, m.requests, m.compute, m.parked, m.releases, held_,
		m.memoryCommitted, m.parkedBytes, m.retainedBytes, m.streams, m.idleParks, m.spills, m.liveWaits,
		// The standard process_* and go_* series, under the names stock
		// dashboards look for (no namespace).
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	return m
}
