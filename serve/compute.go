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
// bucket of rate seconds, refilled at rate/60 per second, charged for the
// CPU time each run's guest used (not for time waiting on tools) and for
// the host's work done for the tenant's requests (by its wall time).
// Admission reserves each run's compute limit until the run ends, and
// admits a run only while the bucket's level less the reservations of the
// runs in flight is positive: all the tenant's concurrent runs together
// overdraw it by at most one run's limit (a tenant whose quota is below
// its runs' limit then runs one program at a time).
type computeBucket struct {
	mu       sync.Mutex
	rate     float64 // seconds per minute; the capacity
	tokens   float64
	reserved float64 // seconds reserved by the runs in flight
	at       time.Time
	now      func() time.Time
}

func newComputeBucket(rate float64, now func() time.Time) *computeBucket {
	return &computeBucket{rate: rate, tokens: rate, at: now(), now: now}
}

func (b *computeBucket) refillLocked(now time.Time) {
	b.tokens = math.Min(b.rate, b.tokens+now.Sub(b.at).Seconds()*b.rate/60)
	b.at = now
}

// reserve admits a run whose compute limit is d, reserving it, while the
// level less the reservations in flight is positive; if not, it reports
// how long until a retry may pass: until the bucket refills when it is
// empty, else a second (a run in flight ends, giving back what it did not
// use).
func (b *computeBucket) reserve(d time.Duration) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(b.now())
	if b.tokens-b.reserved > 0 {
		b.reserved += d.Seconds()
		return true, 0
	}
	if b.tokens <= 0 {
		return false, time.Duration((-b.tokens + 0.001) / (b.rate / 60) * float64(time.Second))
	}
	return false, DefaultRetryAfter
}

// unreserve gives back a reservation made by reserve.
func (b *computeBucket) unreserve(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reserved = math.Max(b.reserved-d.Seconds(), 0)
}

// charge takes d, used, from the bucket.
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
