package serve

import (
	"context"
	"time"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/workspace"
)

// Host work done for a tenant's request, beside its program's run, is
// charged to the tenant's compute (quotas.compute_seconds_per_minute, and
// ptcx_compute_seconds_total) as the guest's CPU time is: compiling the
// schemas of its client tools (an execution's start, and its resume from
// parked bytes), decoding its tool results and reading a program's plan
// (plan.go's readPlan, refused like a run while the tenant's compute is
// spent). It is charged by its wall
// time, the only clock Go has per piece of work (no per-goroutine CPU
// clock): on a busy host that counts the time the work waited for a core.

// chargeHostWork charges d of host work to tenant t.
func (s *Server) chargeHostWork(t *tenant, d time.Duration) {
	if d <= 0 {
		return
	}
	s.metrics.compute.WithLabelValues(t.name).Add(d.Seconds())
	if t.compute != nil {
		t.compute.Charge(d)
	}
}

// executorWith is t.executorWith, the work of building it (the client
// tools' schemas compiled) charged to t.
func (s *Server) executorWith(ctx context.Context, t *tenant, ws *workspace.Workspace, tools []registry.Tool) (*executor.Executor, error) {
	began := time.Now()
	defer func() { s.chargeHostWork(t, time.Since(began)) }()
	return t.executorWith(ctx, ws, tools)
}

// decodeToolResults is DecodeToolResults, charged to t.
func (s *Server) decodeToolResults(t *tenant, body []byte) (*ToolResultsRequest, error) {
	began := time.Now()
	defer func() { s.chargeHostWork(t, time.Since(began)) }()
	return DecodeToolResults(body)
}
