package serve

import (
	"context"
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
	if c := out.Stats.Compute; c > 0 {
		m.counter.Add(c.Seconds())
		if m.bucket != nil {
			m.bucket.charge(c)
		}
	}
	return out, err
}
