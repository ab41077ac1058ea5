package wasmhost

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/vmem"
)

// pool keeps restored instances ready for runs. A run takes one (take); a
// goroutine of the pool, started by a take and ending once the pool is
// full (an idle Runtime has none), restores instances off the request path
// until there are size again. Each idle instance is charged to the Runtime's
// admission for the image's bytes; when a run does not fit, the pool gives
// instances up (yield) before the run waits. The pool starts filling at
// the first take, so a Runtime that runs nothing holds none. Its methods
// are safe for concurrent use, and a nil pool is an empty one.
type pool struct {
	rt     *Runtime
	size   int
	charge int64 // admission bytes per idle instance: the image's size
	// hot is how many recycled instances, and how many spares, the pool
	// keeps with their pages backed (pool_recycle.go): twice the slots, as
	// many as execute at once and as many again finishing, at most size.
	hot int

	mu      sync.Mutex
	idle    []*instance
	spares  []spare // reservations of closed memories, to restore into
	filling bool    // a filler goroutine runs
	closed  bool

	stop chan struct{} // closed by close

	hits, misses, restores, failures, recycled, cooled atomic.Int64
	lastErr                                            atomic.Pointer[error]
}

// newPool returns the pool of rt, empty, or nil when size is 0.
func newPool(rt *Runtime, size int) *pool {
	if size == 0 {
		return nil
	}
	return &pool{rt: rt, size: size, charge: int64(len(rt.image.memory)), hot: min(size, 2*rt.slots.MaxCount()),
		stop: make(chan struct{})}
}

// take returns an idle instance for a run of tenant (Program.Tenant), or
// nil when there is none, and has the pool refilled: the last one recycled
// from a run of the same tenant (pool_recycle.go) and kept hot, whose pages
// are backed, else the last such one cooled, else the last new one
// (restored), which the filler then replaces.
func (p *pool) take(tenant string) *instance {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	hot, cold, fresh := -1, -1, -1
	for i := len(p.idle) - 1; i >= 0 && hot < 0; i-- {
		switch c := p.idle[i]; {
		case !c.recycled:
			if fresh < 0 {
				fresh = i
			}
		case c.tenant != tenant:
		case c.cold:
			if cold < 0 {
				cold = i
			}
		default:
			hot = i
		}
	}
	at := hot
	if at < 0 {
		at = cold
	}
	if at < 0 {
		at = fresh
	}
	var inst *instance
	if at >= 0 {
		inst = p.idle[at]
		n := len(p.idle) - 1
		copy(p.idle[at:], p.idle[at+1:])
		p.idle[n] = nil
		p.idle = p.idle[:n]
	}
	start := !p.filling && !p.closed
	p.filling = p.filling || start
	p.mu.Unlock()
	if start {
		go p.fill()
	}
	if inst != nil {
		p.rt.unchargePool(p.charge)
		p.hits.Add(1)
	} else {
		p.misses.Add(1)
	}
	return inst
}

// yield discards one spare or, when there is none, one idle instance (its
// memory not kept as a spare), giving its memory back to admission, and
// reports whether there was one.
func (p *pool) yield() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	var inst *instance
	var s spare
	if n := len(p.spares); n > 0 {
		s = p.spares[n-1]
		p.spares[n-1] = spare{}
		p.spares = p.spares[:n-1]
	} else if n := len(p.idle); n > 0 {
		inst = p.idle[0]
		p.idle = append(p.idle[:0], p.idle[1:]...)
	}
	p.mu.Unlock()
	switch {
	case s.mem != nil:
		vmem.Release(s.mem)
	case inst != nil:
		inst.memory.spares = nil
		inst.close(context.Background())
	default:
		return false
	}
	p.rt.unchargePool(p.charge)
	return true
}

// Backoff of the pool's filler while the committed memory cap leaves no
// room or restores fail.
const (
	poolRetryMin = 10 * time.Millisecond
	poolRetryMax = time.Second
)

// fill restores instances until the pool has size or the Runtime closes,
// then returns. While the committed memory cap leaves no room (or runs wait
// for it), or restores fail, it tries again with a backoff.
func (p *pool) fill() {
	backoff := poolRetryMin
	for {
		switch p.refillOne() {
		case refilled:
			backoff = poolRetryMin
			continue
		case refillFull:
			return
		}
		t := time.NewTimer(backoff)
		select {
		case <-p.stop:
			t.Stop()
			p.mu.Lock()
			p.filling = false
			p.mu.Unlock()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, poolRetryMax)
	}
}

// What refillOne did.
const (
	refilled    = iota // restored one instance
	refillFull         // the pool is full (or closed)
	refillLater        // no room under the committed memory cap, or the restore failed
)

// restored counts the idle instances that are new (restored, not
// recycled). The caller holds p.mu.
func (p *pool) restored() int {
	n := 0
	for _, inst := range p.idle {
		if !inst.recycled {
			n++
		}
	}
	return n
}

// refillOne restores one instance if the pool is short of one: the filler
// keeps size new instances, whatever tenants' recycled ones the pool also
// holds (pool_recycle.go), so that any tenant's run finds one. When it is
// not (or is closed), the filler ends: filling is cleared in the same
// critical section, so a take that finds it set is sure to be refilled.
func (p *pool) refillOne() int {
	p.mu.Lock()
	short := !p.closed && p.restored() < p.size
	if !short {
		p.filling = false
	}
	p.mu.Unlock()
	if !short {
		return refillFull
	}
	if !p.rt.acquire() { // closed
		p.mu.Lock()
		p.filling = false
		p.mu.Unlock()
		return refillFull
	}
	// The instance is charged once restored, with its joining the pool (so
	// a run that finds no room has idle instances to take back, never one
	// in the making): while it is restored, the one instance the filler
	// makes at a time is not charged.
	inst, err := p.rt.restore(context.Background(), uint64(abi.MemoryPages(p.rt.limits.MemoryBytes))*abi.PageSize)
	p.rt.done()
	if err != nil {
		// Runs restore their own meanwhile, and report the error if it
		// persists; the pool tries again later.
		p.failures.Add(1)
		p.lastErr.Store(&err)
		return refillLater
	}
	p.restores.Add(1)
	p.mu.Lock()
	if p.closed {
		p.filling = false
		p.mu.Unlock()
		inst.close(context.Background())
		return refillFull
	}
	if !p.rt.chargePool(p.charge) {
		// No room under the committed memory cap, or runs wait for it.
		p.mu.Unlock()
		inst.close(context.Background())
		return refillLater
	}
	p.idle = append(p.idle, inst)
	p.mu.Unlock()
	return refilled
}

// close stops the filler (it ends at its next step) and discards the idle
// instances.
func (p *pool) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	idle, spares := p.idle, p.spares
	p.idle, p.spares = nil, nil
	p.mu.Unlock()
	close(p.stop)
	for _, s := range spares {
		vmem.Release(s.mem)
		p.rt.unchargePool(p.charge)
	}
	for _, inst := range idle {
		inst.close(context.Background())
		p.rt.unchargePool(p.charge)
	}
}

// PoolStats describes a Runtime's warm pool (Config.WithPool), for metrics
// and tests.
type PoolStats struct {
	Image     bool  // instances are restored from the image (Config.WithImage, and a guest that can be)
	Size      int   // the pool's size: 0 when off
	Idle      int   // instances ready now: up to Size new ones restored by the pool, and runs' recycled ones, up to twice Size in all
	Spares    int   // reservations of closed instances kept to restore into (spare)
	Bytes     int64 // what the idle instances and the spares are charged to the committed memory cap
	Hits      int64 // runs that took a ready instance
	Misses    int64 // runs that found none and restored their own
	Restores  int64 // instances the pool restored
	Recycled  int64 // instances of finished runs reset to the image and kept (pool_recycle.go)
	Cooled    int64 // of those, the ones kept cooled, not hot (pool_recycle.go)
	Failures  int64 // restores that failed
	LastError error // the last restore's error, if one failed

	// Kept with the pool or without it (charged to the committed memory
	// cap as the pool's instances are, and not in Bytes):
	ResumeSpares        int   // memories of resumed runs kept backed for the next resumes (pool_resume.go)
	ResumeSpareBytes    int64 // their sizes, summed
	ResumeSpareReadied  int64 // instances restored into resume spares ahead of a resume, off its path (pool_resume.go)
	ResumeSpareTaken    int64 // resumes that took one of those
	SnapshotBuffers     int   // snapshot buffers given back and kept for the next suspensions (snapshot_buffers.go)
	SnapshotBufferBytes int64 // their capacities, summed
}

// PoolStats returns the pool's counters (zero when the pool is off), and
// the resume spares and snapshot buffers the Runtime keeps.
func (rt *Runtime) PoolStats() PoolStats {
	s := rt.poolStats()
	s.ResumeSpares, s.ResumeSpareBytes = rt.resumeSpareStats()
	s.ResumeSpareReadied, s.ResumeSpareTaken = rt.resumeSpares.readied.Load(), rt.resumeSpares.taken.Load()
	rt.snapBufs.mu.Lock()
	s.SnapshotBuffers, s.SnapshotBufferBytes = len(rt.snapBufs.free), rt.snapBufs.bytes
	rt.snapBufs.mu.Unlock()
	return s
}

func (rt *Runtime) poolStats() PoolStats {
	p := rt.pool
	if p == nil {
		return PoolStats{Image: rt.image != nil}
	}
	p.mu.Lock()
	idle, spares := len(p.idle), len(p.spares)
	p.mu.Unlock()
	s := PoolStats{Image: true, Size: p.size, Idle: idle, Spares: spares, Bytes: int64(idle+spares) * p.charge, Hits: p.hits.Load(),
		Misses: p.misses.Load(), Restores: p.restores.Load(), Recycled: p.recycled.Load(), Cooled: p.cooled.Load(), Failures: p.failures.Load()}
	if e := p.lastErr.Load(); e != nil {
		s.LastError = *e
	}
	return s
}

// A spare is the reservation of a memory restored from the image, given
// back when its instance closed (cappedMemory.Free), to be the memory of a
// later restore. Its pages are already backed: a memory that starts on a
// new mapping of the image takes a page fault for each page the guest
// first touches (several microseconds each on a virtual machine, and a
// trivial run touches dozens), and unmapping it costs as much again.
// reset makes it the image again before it is reused, so that nothing of
// one run is visible to another.
type spare struct {
	mem  []byte // the whole reservation
	used int    // the memory's size when it closed: nothing past it was written (keep discards past the image)
	cow  bool   // the image is mapped over its start
}

// keep takes the reservation of a closed memory as a spare, and reports
// whether it did: the pool keeps at most its size of them, none once
// closed, and none that does not fit under the committed memory cap. A
// spare is charged to it as an idle instance is, for the image's size:
// what the memory grew to past the image is given back to the kernel
// first, so that its backed pages are at most the image's, as an idle
// instance's are; and a spare kept past the pool's hot ones has its memory
// reverted to the image's file (revert), so that it holds none, as a
// cooled instance (pool_recycle.go).
func (p *pool) keep(s spare) bool {
	if p == nil {
		return false
	}
	n := len(p.rt.image.memory)
	if s.used > n {
		vmem.Discard(s.mem[n:s.used])
		s.used = n
	}
	p.mu.Lock()
	cool := len(p.spares) >= p.hot
	p.mu.Unlock()
	if cool && s.cow {
		vmem.Revert(s.mem[:n]) // best effort: where it fails, the spare stays backed
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.spares) >= p.size || !p.rt.chargePool(p.charge) {
		return false
	}
	p.spares = append(p.spares, s)
	return true
}

// spare returns a spare of at least limit bytes, reset to the image, or
// false when there is none.
func (p *pool) spare(limit uint64) (spare, bool) {
	if p == nil {
		return spare{}, false
	}
	p.mu.Lock()
	n := len(p.spares)
	if n == 0 || uint64(len(p.spares[n-1].mem)) < limit {
		p.mu.Unlock()
		return spare{}, false
	}
	s := p.spares[n-1]
	p.spares[n-1] = spare{}
	p.spares = p.spares[:n-1]
	p.mu.Unlock()
	p.rt.unchargePool(p.charge)
	s.reset(p.rt.image)
	return s, true
}

// reset makes the spare's memory the image's again (vmem.ResetBlocks); past the
// image it reads as zeros already (keep).
func (s *spare) reset(img *image) {
	var scratch []byte
	vmem.ResetBlocks(s.mem, img.memory, s.cow, &scratch)
}
