package quota

import (
	"sync"
	"time"

	"github.com/ptcx/ptcx/serve/internal/compute"
)

// Bound is a quota work can be refused for.
type Bound int

// The bounds, in the order Admit checks them (MaxStreams is OpenStream's).
const (
	// MaxConcurrent is quotas.max_concurrent: runs and direct calls in
	// flight.
	MaxConcurrent Bound = iota + 1
	// MaxPending is quotas.max_pending: executions that may wait on their
	// client, parked or live.
	MaxPending
	// Compute is quotas.compute_seconds_per_minute (compute.Bucket).
	Compute
	// MemoryShare is quotas.max_memory_mb: the guest memory the runs in
	// flight commit.
	MemoryShare
	// ParkedBytes is quotas.max_parked_bytes: the bytes of parked
	// executions' snapshots.
	ParkedBytes
	// MaxStreams is quotas.max_streams: event streams open at once.
	MaxStreams
)

// Limits are a tenant's shares of what the server's tenants share, their
// defaults applied.
type Limits struct {
	MaxConcurrent int
	MaxPending    int
	MemoryShare   int64 // bytes of committed guest memory
	MaxParked     int64 // bytes of parked snapshots
	MaxStreams    int
}

// Work is what a request asks its tenant to admit.
type Work struct {
	// Memory is the guest memory the run commits in the sandbox (its
	// memory limit), held against the tenant's memory share; 0 for a direct
	// call of a tool that runs no program.
	Memory int64
	// Compute is the run's compute limit, reserved from the tenant's
	// compute bucket until the run ends; 0 for a direct call of a tool that
	// runs no program.
	Compute time.Duration
	// Client is an execution that may wait on its client (it declared
	// client tools, or its program may ask for an approval): it takes one
	// of the tenant's max_pending, and is refused while the tenant's parked
	// bytes are at their quota.
	Client bool
	// Resume is a parked execution resuming: it holds its pending
	// reservation already, and is not refused for parked bytes.
	Resume bool
}

// Refusal is work refused: the bound it is past, and what the tenant held
// of it then.
type Refusal struct {
	Bound Bound
	// Held is the bytes the tenant held: committed memory (MemoryShare),
	// parked bytes (ParkedBytes); 0 for the other bounds.
	Held int64
	// Wait is, for Compute, how long until a retry may pass
	// (compute.Bucket.Reserve).
	Wait time.Duration
}

// Gauges show what a tenant holds (prometheus.Gauges; none may be nil).
type Gauges struct {
	Memory, Parked, Streams Gauge
}

// Quota is what a tenant holds of what the server's tenants share, against
// its Limits. Every way the tenant starts work is admitted by Admit, which
// holds what it took in one Ticket, given back through the Ticket. It is
// safe for concurrent use.
type Quota struct {
	limits  Limits
	compute *compute.Bucket // nil: no compute quota
	gauges  Gauges

	mu      sync.Mutex
	live    int   // runs and direct calls admitted, against MaxConcurrent
	pending int   // executions that may wait on their client, against MaxPending
	memory  int64 // committed by the admitted runs, against MemoryShare
	parked  int64 // bytes of parked snapshots (spill or store)
	streams int   // open event streams
}

// New returns a tenant's quota: l its limits, b its compute bucket (nil
// for none), g where what it holds is shown.
func New(l Limits, b *compute.Bucket, g Gauges) *Quota {
	return &Quota{limits: l, compute: b, gauges: g}
}

// Limits are the quota's limits.
func (q *Quota) Limits() Limits { return q.limits }

// Admit admits w, or refuses it with the first bound it is past, in this
// order: MaxConcurrent, MaxPending (a Client that is not a Resume),
// Compute (reserving w.Compute from the bucket), MemoryShare (w.Memory >
// 0), ParkedBytes (a Client that is not a Resume, while the parked bytes
// are at their quota). A refusal takes nothing.
func (q *Quota) Admit(w Work) (*Ticket, *Refusal) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.live >= q.limits.MaxConcurrent {
		return nil, &Refusal{Bound: MaxConcurrent}
	}
	pend := w.Client && !w.Resume
	if pend && q.pending >= q.limits.MaxPending {
		return nil, &Refusal{Bound: MaxPending}
	}
	if q.compute != nil {
		if ok, wait := q.compute.Reserve(w.Compute); !ok {
			return nil, &Refusal{Bound: Compute, Wait: wait}
		}
	}
	if w.Memory > 0 && q.memory+w.Memory > q.limits.MemoryShare {
		q.unreserve(w)
		return nil, &Refusal{Bound: MemoryShare, Held: q.memory}
	}
	if pend && q.parked >= q.limits.MaxParked {
		q.unreserve(w)
		return nil, &Refusal{Bound: ParkedBytes, Held: q.parked}
	}
	k := &Ticket{q: q, w: w}
	if pend {
		k.pend = q.reservePendingLocked()
	}
	q.live++
	q.memory += w.Memory
	q.gauges.Memory.Set(float64(q.memory))
	return k, nil
}

func (q *Quota) unreserve(w Work) {
	if q.compute != nil {
		q.compute.Unreserve(w.Compute)
	}
}

// reservePendingLocked counts one execution that may wait on its client,
// until the returned function (idempotent) gives it back. q.mu is held.
func (q *Quota) reservePendingLocked() func() {
	q.pending++
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			q.pending--
			q.mu.Unlock()
		})
	}
}

// ForcePending counts one execution that may wait on its client whatever
// max_pending says, until the returned function gives it back: one taken
// over from another node, where it was counted already.
func (q *Quota) ForcePending() func() {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.reservePendingLocked()
}

// Pending is how many executions that may wait on their client the tenant
// holds now.
func (q *Quota) Pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending
}

// Parked moves the tenant's parked bytes by delta (a snapshot written, or
// given up once its execution ran or settled).
func (q *Quota) Parked(delta int64) {
	q.mu.Lock()
	q.parked += delta
	n := q.parked
	q.mu.Unlock()
	q.gauges.Parked.Set(float64(n))
}

// ParkRoom reports whether the tenant may park now: while its parked bytes
// are below its quota, so that the quota is passed by one snapshot at most
// (as the compute quota by one run's limit), and an execution admitted
// while the tenant was below it parks when its turn comes.
func (q *Quota) ParkRoom() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.parked < q.limits.MaxParked
}

// OpenStream takes one of the tenant's event streams, or refuses
// (MaxStreams); close is idempotent.
func (q *Quota) OpenStream() (close func(), r *Refusal) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.streams >= q.limits.MaxStreams {
		return nil, &Refusal{Bound: MaxStreams}
	}
	q.streams++
	q.gauges.Streams.Set(float64(q.streams))
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			q.streams--
			q.gauges.Streams.Set(float64(q.streams))
			q.mu.Unlock()
		})
	}, nil
}

// Occupy takes n concurrent slots beside what the tenant holds and its
// quota, until release: the server's tests stand for n runs in flight with
// it.
func (q *Quota) Occupy(n int) (release func()) {
	q.mu.Lock()
	q.live += n
	q.mu.Unlock()
	return sync.OnceFunc(func() {
		q.mu.Lock()
		q.live -= n
		q.mu.Unlock()
	})
}

// Ticket is admitted work's hold on its tenant's quota: the run's part
// (its concurrent slot, its memory, its compute reservation), given back
// as the run ends or parks (EndRun), and the pending reservation of a
// Client, given back as the execution settles (TakePending hands it over).
// EndRun and Release are idempotent; a Ticket is safe for concurrent use.
type Ticket struct {
	q    *Quota
	w    Work
	once sync.Once // the run's part
	mu   sync.Mutex
	pend func() // the max_pending reservation, until taken or released
}

// EndRun gives back the run's part: its concurrent slot, its memory and
// its compute reservation (what it used is charged to the bucket as it
// ran). It is what a run does as it ends or parks.
func (k *Ticket) EndRun() {
	k.once.Do(func() {
		q := k.q
		q.mu.Lock()
		q.live--
		q.memory -= k.w.Memory
		q.gauges.Memory.Set(float64(q.memory))
		q.mu.Unlock()
		q.unreserve(k.w)
	})
}

// TakePending hands the pending reservation to the execution, which gives
// it back as it settles (nil: none).
func (k *Ticket) TakePending() func() {
	k.mu.Lock()
	defer k.mu.Unlock()
	p := k.pend
	k.pend = nil
	return p
}

// Release gives back everything the ticket still holds: work refused
// after it was admitted, or a run that never started.
func (k *Ticket) Release() {
	k.EndRun()
	if p := k.TakePending(); p != nil {
		p()
	}
}
