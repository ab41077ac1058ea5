// Package compute is a tenant's compute quota in ptcx serve
// (quotas.compute_seconds_per_minute): a token bucket charged for the CPU
// time its runs' guests used and the host's work done for it, with the
// runs in flight reserved. It imports only the standard library.
package compute

import (
	"math"
	"sync"
	"time"
)

// Bucket is a tenant's compute-seconds-per-minute quota: a token bucket of
// rate seconds, refilled at rate/60 per second, charged for the CPU time
// each run's guest used (not for time waiting on tools) and for the host's
// work done for the tenant's requests (by its wall time). Admission
// reserves each run's compute limit until the run ends, and admits a run
// only while the bucket's level less the reservations of the runs in
// flight is positive: all the tenant's concurrent runs together overdraw it
// by at most one run's limit (a tenant whose quota is below its runs' limit
// then runs one program at a time). It is safe for concurrent use.
type Bucket struct {
	mu       sync.Mutex
	rate     float64 // seconds per minute; the capacity
	tokens   float64
	reserved float64 // seconds reserved by the runs in flight
	at       time.Time
	now      func() time.Time
	busy     time.Duration
}

// New returns a full bucket of rate seconds per minute. busy is the wait
// Reserve reports while the runs in flight hold what is left (one of them
// ending gives back what it did not use); now is its clock (time.Now).
func New(rate float64, busy time.Duration, now func() time.Time) *Bucket {
	return &Bucket{rate: rate, tokens: rate, at: now(), now: now, busy: busy}
}

// Rate is the bucket's seconds per minute.
func (b *Bucket) Rate() float64 { return b.rate }

func (b *Bucket) refillLocked(now time.Time) {
	b.tokens = math.Min(b.rate, b.tokens+now.Sub(b.at).Seconds()*b.rate/60)
	b.at = now
}

// Reserve admits a run whose compute limit is d, reserving it, while the
// level less the reservations in flight is positive; if not, it reports
// how long until a retry may pass: until the bucket refills when it is
// empty, else the busy wait given to New.
func (b *Bucket) Reserve(d time.Duration) (bool, time.Duration) {
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
	return false, b.busy
}

// Unreserve gives back a reservation made by Reserve.
func (b *Bucket) Unreserve(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reserved = math.Max(b.reserved-d.Seconds(), 0)
}

// Charge takes d, used, from the bucket.
func (b *Bucket) Charge(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(b.now())
	b.tokens -= d.Seconds()
}
