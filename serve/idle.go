package serve

import (
	"runtime/debug"
	"sync/atomic"
	"time"
)

// IdleReleaseAfter is how long the service must have run no execution
// before it gives the memory its last load left free back to the operating
// system (debug.FreeOSMemory: a collection, then every free page returned).
// Without it an idle process keeps the resident memory of its busiest
// moment: Go collects only when the heap grows, or every two minutes, and
// returns freed pages gradually after that. Executions still retained for
// reading (server.retention_ms) are live, and stay.
const IdleReleaseAfter = 5 * time.Second

// idleCheckEvery is how often the service checks whether it went idle.
const idleCheckEvery = time.Second

// idleRelease tracks the executions running and when the last one ended or
// the last settled ones were evicted, so that memory is released once per
// idle period, after something freed it, and never while an execution
// runs. Its methods are safe for concurrent use.
type idleRelease struct {
	live     atomic.Int64
	changed  atomic.Int64 // unix nanoseconds of the last end or eviction; 0: none yet
	released atomic.Int64 // changed's value at the last release
}

// begin and end bracket an execution's goroutine.
func (r *idleRelease) begin() { r.live.Add(1) }

func (r *idleRelease) end(now time.Time) {
	r.changed.Store(now.UnixNano())
	r.live.Add(-1)
}

// evicted records that settled executions were forgotten at now.
func (r *idleRelease) evicted(now time.Time) { r.changed.Store(now.UnixNano()) }

// due reports whether memory should be released at now: no execution runs,
// something ended or was evicted since the last release, at least
// IdleReleaseAfter ago.
func (r *idleRelease) due(now time.Time) bool {
	c := r.changed.Load()
	return c != 0 && c != r.released.Load() && r.live.Load() == 0 && now.Sub(time.Unix(0, c)) >= IdleReleaseAfter
}

// release gives free memory back to the OS when due (the sweeper calls it
// every idleCheckEvery) and reports whether it did: first trim, what the
// sandbox keeps only to be faster (wasmhost.Runtime.Trim: its resume
// spares and snapshot buffers), then the free heap.
func (r *idleRelease) release(now time.Time, trim func()) bool {
	c := r.changed.Load() // an end or eviction after this load makes the next check due again
	if !r.due(now) {
		return false
	}
	r.released.Store(c)
	trim()
	debug.FreeOSMemory()
	return true
}
