package serve

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/wasmhost"
)

// computeBucket is a tenant's compute-seconds-per-minute quota: a token
// bucket of rate seconds, refilled at rate/60 per second, charged after
// each run for the CPU time its guest used (not for time waiting on tools).
// A run is admitted while the bucket is positive, so one run may overdraw
// it; the next ones wait until it refills.
type computeBucket struct {
	mu     sync.Mutex
	rate   float64 // seconds per minute; the capacity
	tokens float64
	at     time.Time
	now    func() time.Time
}

func newComputeBucket(rate float64, now func() time.Time) *computeBucket {
	return &computeBucket{rate: rate, tokens: rate, at: now(), now: now}
}

func (b *computeBucket) refillLocked(now time.Time) {
	b.tokens = math.Min(b.rate, b.tokens+now.Sub(b.at).Seconds()*b.rate/60)
	b.at = now
}

// available reports whether a run may start, and if not, how long until it
// may.
func (b *computeBucket) available() (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(b.now())
	if b.tokens > 0 {
		return true, 0
	}
	wait := time.Duration((-b.tokens + 0.001) / (b.rate / 60) * float64(time.Second))
	return false, wait
}

func (b *computeBucket) charge(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(b.now())
	b.tokens -= d.Seconds()
}

// meteredRuntime is a tenant's view of the shared sandbox: it charges each
// run's compute time to the tenant's bucket (when it has one) and counter.
type meteredRuntime struct {
	inner   executor.CodeRuntime
	bucket  *computeBucket // nil: no compute quota
	counter prometheus.Counter
}

func (m *meteredRuntime) Run(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
	out, err := m.inner.Run(ctx, p, d)
	if c := out.Stats.Compute; c > 0 && out.Suspended == nil { // a parked run is charged when it ends (Resume)
		m.counter.Add(c.Seconds())
		if m.bucket != nil {
			m.bucket.charge(c)
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
			m.bucket.charge(c)
		}
	}
	return out, err
}
