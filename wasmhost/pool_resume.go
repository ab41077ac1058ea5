package wasmhost

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
	"github.com/ptcx/ptcx/wasmhost/internal/vmem"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// Resume spares. Resuming a snapshot of megabytes of heap into a memory
// restored from the image spends most of its time in the kernel, backing
// the pages the blocks go to (docs/performance-notebook.md, "Third pass"): those
// past the image are a fresh reservation's, those within it copy-on-write
// faults. A Runtime (with a pool or without) keeps the reservations of the
// last few memories that grew past the image and were resumed or suspended
// from, with their pages backed (resume spares), and a resume takes one whose backed size covers
// its snapshot: the blocks are copied into pages that are already there.
//
// Nothing of the run that used a spare reaches the next: taken, a spare is
// made the image's, the snapshot's or zero in every byte
// (resetForSnapshot): its pages that may hold a private copy (the page
// table says which: pagemap_linux.go) and are not the snapshot's blocks
// are compared and copied from the image (within it) or cleared (past it),
// and what lies past the snapshot's size is given back to the kernel, so
// that it reads as zeros when the memory grows.
//
// Only memories that served a resume, or that a run suspended from, become
// resume spares (an idle pool that suspends and resumes nothing holds
// none), at most resumeSpareCount of them
// (the newest: one kept past it gives its oldest up, unmapped on a
// goroutine of its own), none larger than
// maxResumeSpareBytes. Each is charged to admission's committed memory
// for its backed size (its memory's size when it closed), as the pool's
// instances are charged (chargePool); a spare that does not fit is
// released, and a run that does not fit beside them takes their room
// (yieldResumeSpare, from admit). They are released when the Runtime
// closes. On the engines whose memory is not a reservation of the host's
// (wasmtime's), there are none.

// Bounds of a Runtime's resume spares.
const (
	// resumeSpareCount is the most resume spares a Runtime keeps (with
	// fewer guest slots, twice its slots: as many as resume at once and
	// as many again finishing, as the pool keeps hot).
	resumeSpareCount = 4
	// maxResumeSpareBytes is the largest memory kept as a resume spare:
	// its size when it closed, all of which may be backed.
	maxResumeSpareBytes = 64 << 20
)

// resumeSpare is the reservation of a memory that served a resume.
type resumeSpare struct {
	mem  []byte // the whole reservation
	used int    // the memory's size when it closed: nothing past it was written
	cow  bool   // the image is mapped copy-on-write over its start
	huge bool   // part of it asks for transparent huge pages (populateWindow)
	// inst is the instance restored into mem ahead of a resume
	// (readyResumeSpares), or nil: a bare reservation.
	inst *instance
	// readying says the goroutine restores an instance into mem: the
	// spare cannot be taken, and whoever removes it leaves mem to it.
	readying bool
}

// resumeSpares are a Runtime's resume spares, oldest first.
type resumeSpares struct {
	mu     sync.Mutex
	list   []resumeSpare
	closed bool
	// readier says a goroutine readies the spares (readyResumeSpares).
	readier bool
	// bare keeps spares bare, never readied (tests of the list alone).
	bare bool
	// readied counts the instances restored into spares ahead of a
	// resume, taken the resumes that took one.
	readied, taken atomic.Int64
	// readyEnd is signalled when a spare's readying ends (cond), for a
	// take that only a spare being readied covers.
	readyEnd sync.Cond
}

// resumeSpareCount is how many resume spares rt keeps.
func (rt *Runtime) resumeSpareCount() int {
	return min(resumeSpareCount, 2*rt.slots.MaxCount())
}

// keepResumeSpare takes the reservation of a memory that served a resume
// as a resume spare, and reports whether it did: not when it did not grow
// past the image (the pool's spares take it, pool.keep), is larger than
// maxResumeSpareBytes, or does not fit under the committed memory cap, nor
// once the Runtime closed. With resumeSpareCount kept already, the oldest
// is released for it.
func (rt *Runtime) keepResumeSpare(s resumeSpare) bool {
	if rt.image == nil || s.used <= len(rt.image.memory) || s.used > maxResumeSpareBytes || s.used > len(s.mem) {
		return false
	}
	sp := &rt.resumeSpares
	count := rt.resumeSpareCount()
	sp.mu.Lock()
	if sp.closed || count == 0 {
		sp.mu.Unlock()
		return false
	}
	s.inst, s.readying = nil, false
	var evicted []resumeSpare
	for len(sp.list) >= count {
		if !sp.list[0].readying { // else the readier releases it
			evicted = append(evicted, sp.list[0])
		}
		rt.unchargePool(int64(sp.list[0].used))
		sp.list = slices.Delete(sp.list, 0, 1)
	}
	ok := rt.chargePool(int64(s.used))
	if ok {
		sp.list = append(sp.list, s)
	}
	// Readied only where the engine takes the host's reservation as the
	// memory (not inModule: wasmtime's memory is its own).
	start := ok && !sp.bare && !sp.readier && !rt.image.inModule
	sp.readier = sp.readier || start
	sp.mu.Unlock()
	if len(evicted) > 0 {
		// Off the closing run's path: unmapping megabytes of backed pages
		// takes the kernel about half a millisecond (docs/performance-notebook.md,
		// "Fifth pass"), which a suspension paid before it returned. Its
		// charge is gone already; the pages are the kernel's a moment later.
		go func() {
			for _, e := range evicted {
				rt.dropResumeSpare(e)
			}
		}()
	}
	if start {
		go rt.readyResumeSpares()
	}
	return ok
}

// readyResumeSpares restores an instance from the image into each bare
// resume spare, one at a time, until none is left (or the Runtime
// closes). It runs as a guest that executes (acquire), so the engine is
// not closed under it.
func (rt *Runtime) readyResumeSpares() {
	sp := &rt.resumeSpares
	for {
		sp.mu.Lock()
		at := slices.IndexFunc(sp.list, func(s resumeSpare) bool { return s.inst == nil && !s.readying })
		if sp.closed || at < 0 {
			sp.readier = false
			sp.mu.Unlock()
			return
		}
		sp.list[at].readying = true
		s := sp.list[at]
		sp.mu.Unlock()
		if !rt.acquire() { // closed: closeResumeSpares left it to us
			vmem.Release(s.mem)
			continue
		}
		inst, err := rt.restoreInto(context.Background(), uint64(len(s.mem)), s)
		sp.mu.Lock()
		at = slices.IndexFunc(sp.list, func(e resumeSpare) bool { return e.readying && &e.mem[0] == &s.mem[0] })
		sp.cond().Broadcast()
		switch {
		case at >= 0 && err == nil:
			sp.list[at].inst, sp.list[at].readying = inst, false
			sp.readied.Add(1)
			sp.mu.Unlock()
		case at >= 0: // restoreInto released the memory
			rt.unchargePool(int64(s.used))
			sp.list = slices.Delete(sp.list, at, at+1)
			sp.mu.Unlock()
		default: // evicted, yielded or closed meanwhile
			sp.mu.Unlock()
			if err == nil {
				s.inst = inst
				rt.dropResumeSpare(s)
			}
		}
		rt.done()
	}
}

// dropResumeSpare releases s, a resume spare no longer in the list: its
// instance closed (its memory released with it, never kept as the pool's
// spare: its pages past the image hold what a run left there), or its
// bare reservation unmapped.
func (rt *Runtime) dropResumeSpare(s resumeSpare) {
	if s.inst == nil {
		vmem.Release(s.mem)
		return
	}
	s.inst.memory.spares = nil
	s.inst.close(context.Background())
}

// takeResumeSpare returns the resume spare of the least backed size that
// covers need bytes, in a reservation of at least limit bytes, or false
// when none does. When only a spare being readied covers it, it waits for
// the readying to end. Its instance, when it has one, is the caller's;
// else its reservation is.
func (rt *Runtime) takeResumeSpare(need int, limit uint64) (resumeSpare, bool) {
	sp := &rt.resumeSpares
	sp.mu.Lock()
	at := -1
	for {
		busy := false
		for i, s := range sp.list {
			switch {
			case s.used < need || uint64(len(s.mem)) < limit:
			case s.readying:
				busy = true
			case at < 0 || s.used < sp.list[at].used:
				at = i
			}
		}
		if at >= 0 {
			break
		}
		if !busy {
			sp.mu.Unlock()
			return resumeSpare{}, false
		}
		// Only a spare being readied covers it: its instance is a fraction
		// of a millisecond away, a memory of its own is more (the pages
		// the blocks go to faulted in, and the same instantiation).
		sp.cond().Wait()
	}
	s := sp.list[at]
	sp.list = slices.Delete(sp.list, at, at+1)
	sp.mu.Unlock()
	rt.unchargePool(int64(s.used))
	if s.inst != nil {
		sp.taken.Add(1)
	}
	return s, true
}

// cond returns the condition signalled when a spare's readying ends. The
// caller holds sp.mu.
func (sp *resumeSpares) cond() *sync.Cond {
	if sp.readyEnd.L == nil {
		sp.readyEnd.L = &sp.mu
	}
	return &sp.readyEnd
}

// yieldResumeSpare releases the oldest resume spare, giving its memory
// back to admission, and reports whether there was one.
func (rt *Runtime) yieldResumeSpare() bool {
	sp := &rt.resumeSpares
	sp.mu.Lock()
	if len(sp.list) == 0 {
		sp.mu.Unlock()
		return false
	}
	s := sp.list[0]
	sp.list = slices.Delete(sp.list, 0, 1)
	sp.mu.Unlock()
	if !s.readying { // else the readier releases it
		rt.dropResumeSpare(s)
	}
	rt.unchargePool(int64(s.used))
	return true
}

// closeResumeSpares releases the resume spares, for good (Runtime.Close).
func (rt *Runtime) closeResumeSpares() {
	sp := &rt.resumeSpares
	sp.mu.Lock()
	list := sp.list
	sp.list, sp.closed = nil, true
	sp.cond().Broadcast() // a take waiting on a spare being readied finds none
	sp.mu.Unlock()
	for _, s := range list {
		if !s.readying { // else the readier releases it
			rt.dropResumeSpare(s)
		}
		rt.unchargePool(int64(s.used))
	}
}

// resumeSpareStats returns how many resume spares rt keeps, and their
// backed bytes.
func (rt *Runtime) resumeSpareStats() (int, int64) {
	sp := &rt.resumeSpares
	sp.mu.Lock()
	defer sp.mu.Unlock()
	var bytes int64
	for _, s := range sp.list {
		bytes += int64(s.used)
	}
	return len(sp.list), bytes
}

// restoreInto returns a new instance restored from the image into the
// resume spare s, with a memory capped at limit bytes: its bytes are not
// yet the image's (resetForSnapshot makes them so).
func (rt *Runtime) restoreInto(ctx context.Context, limit uint64, s resumeSpare) (*instance, error) {
	img := rt.image
	// No pool spares: the reservation's pages past the image hold what a
	// run left there, which only resetForSnapshot clears.
	memory := &cappedMemory{limit: limit, image: img, preset: &s}
	w := &world.World{}
	mod, err := rt.eng.Instantiate(ctx, img.module, memory, w, false)
	if err != nil {
		if memory.preset != nil { // not taken by the engine
			vmem.Release(s.mem)
		}
		return nil, fmt.Errorf("restore the guest: %w", err)
	}
	inst, err := bindLazily(mod, memory, w, &img.exports)
	if err != nil {
		return nil, err
	}
	if memory.mapped == nil || &memory.mapped[0] != &s.mem[0] {
		// The engine did not take the reservation (its memory is its own).
		inst.close(ctx)
		vmem.Release(s.mem)
		return nil, fmt.Errorf("wasmhost: the engine did not take the resume spare's memory")
	}
	inst.bufPtr, inst.bufCap = img.bufPtr, img.bufCap
	return inst, nil
}

// resetForSnapshot makes mem, the reservation of a resume spare whose
// memory had used bytes, ready for a snapshot whose memory has size bytes
// and whose blocks (ascending) are written next: every other byte below
// size is the image's (img) or zero, every byte from size to used zero
// (given back to the kernel). cow says the image is mapped copy-on-write
// over mem's start: then only the pages that may hold a private copy are
// compared (vmem.PrivatePages), within the image and past it; else the image's
// blocks are all compared, and past it only those pages.
func resetForSnapshot(mem []byte, used int, img []byte, blocks []uint32, size int, cow bool, scratch *[]byte) {
	if used > size {
		vmem.Discard(mem[size:used])
	}
	end := min(used, size)
	reset := func(off, stop int) {
		for ; off < stop; off += snapshot.BlockSize {
			if _, in := slices.BinarySearch(blocks, uint32(off/snapshot.BlockSize)); in {
				continue // written next
			}
			b := mem[off : off+snapshot.BlockSize]
			if off < len(img) {
				if want := img[off : off+snapshot.BlockSize]; string(b) != string(want) {
					copy(b, want)
				}
			} else if !snapshot.AllZero(b) {
				clear(b)
			}
		}
	}
	from := 0
	if !cow {
		reset(0, len(img))
		from = len(img)
	}
	if from >= end {
		return
	}
	// The page table is read only over the runs of pages the blocks do not
	// cover (the blocks are written whole next): a snapshot's blocks are
	// most of its memory, and reading the table costs about 0.25-0.35 µs a
	// page once it is out of the cache (bench's snapshot: 1,024 pages read
	// in 0.26-0.37 ms, of which its 916 blocks leave 108 to check).
	for _, gap := range gaps(blocks, from/snapshot.BlockSize, end/snapshot.BlockSize) {
		lo, hi := gap[0]*snapshot.BlockSize, gap[1]*snapshot.BlockSize
		var ok bool
		if *scratch, ok = vmem.PrivatePages(mem[lo:hi], *scratch, func(off, stop int) { reset(lo+off, lo+stop) }); !ok {
			reset(lo, hi)
		}
	}
}

// gaps returns the runs [lo, hi) of block indices in [from, to) that are
// not in blocks (ascending, no duplicates).
func gaps(blocks []uint32, from, to int) [][2]int {
	var out [][2]int
	i, _ := slices.BinarySearch(blocks, uint32(from))
	at := from
	for ; i < len(blocks) && int(blocks[i]) < to; i++ {
		if b := int(blocks[i]); b > at {
			out = append(out, [2]int{at, b})
		}
		at = int(blocks[i]) + 1
	}
	if at < to {
		out = append(out, [2]int{at, to})
	}
	return out
}

// Trim gives back what the Runtime keeps only to be faster next time:
// its resume spares (memories kept backed for the next resume) and its
// recycled snapshot buffers. The warm pool stays (it is the fast start; its
// recycled instances are cooled as the pool's own bound says). A service
// calls it once it has gone idle, so that an idle process holds what it
// held before its load (ptcx serve does, beside returning its free heap to
// the OS). It is safe to call at any time; a run that needs room takes it
// the same way. Its Python Runtime's are released too.
func (rt *Runtime) Trim() {
	for rt.yieldResumeSpare() {
	}
	for rt.yieldSnapshotBuffer() {
	}
	if o := rt.other(); o != nil && rt.parent == nil {
		o.Trim()
	}
}
