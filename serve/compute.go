package serve

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/serve/internal/compute"
	"github.com/ptcx/ptcx/wasmhost"
)

// meteredRuntime is a tenant's view of the shared sandbox: it charges each
// run's compute time to the tenant's bucket (when it has one:
// serve/internal/compute) and counter.
type meteredRuntime struct {
	inner   executor.CodeRuntime
	bucket  *compute.Bucket // nil: no compute quota
	counter prometheus.Counter
}

func (m *meteredRuntime) Run(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
	out, err := m.inner.Run(ctx, p, d)
	if c := out.Stats.Compute; c > 0 && out.Suspended == nil { // a parked run is charged when it ends (Resume)
		m.counter.Add(c.Seconds())
		if m.bucket != nil {
			m.bucket.Charge(c)
		}
	}
	return out, err
}

// Resume continues a parked run on the inner runtime (executor's parking
// needs it), charged as Run is: a suspended run's Outcome has no stats,
// and the final one's compute time is the whole run's, so each run is
// charged once in all.
func (m *meteredRuntime) Resume(ctx context.Context, snapshot []byte, d wasmhost.Dispatcher, rs wasmhost.Resumption) (wasmhost.Outcome, error) {
	r, ok := m.inner.(interface {
		Resume(context.Context, []byte, wasmhost.Dispatcher, wasmhost.Resumption) (wasmhost.Outcome, error)
	})
	if !ok {
		return wasmhost.Outcome{}, errors.New("serve: the sandbox cannot resume parked runs (it is not a *wasmhost.Runtime with its image)")
	}
	out, err := r.Resume(ctx, snapshot, d, rs)
	if c := out.Stats.Compute; c > 0 && out.Suspended == nil {
		m.counter.Add(c.Seconds())
		if m.bucket != nil {
			m.bucket.Charge(c)
		}
	}
	return out, err
}

// RecycleSnapshot gives a parked run's snapshot buffer back to the inner
// runtime (executor's parking gives back what it holds).
func (m *meteredRuntime) RecycleSnapshot(sp *wasmhost.Suspended) {
	if r, ok := m.inner.(interface{ RecycleSnapshot(*wasmhost.Suspended) }); ok {
		r.RecycleSnapshot(sp)
	}
}

// Done is closed when the inner runtime closes (an idle-parked run then
// ends as a live one would); never, for one that does not say.
func (m *meteredRuntime) Done() <-chan struct{} {
	if d, ok := m.inner.(interface{ Done() <-chan struct{} }); ok {
		return d.Done()
	}
	return nil
}
