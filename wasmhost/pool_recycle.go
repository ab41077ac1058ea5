package wasmhost

import (
	"context"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
	"github.com/ptcx/ptcx/wasmhost/internal/vmem"
)

// Recycling: the instance of a run that settled is reset to the image and
// given back to the warm pool, to serve a later run as a new one restored
// from the image would. A restore costs a trivial run most of its CPU time
// besides the guest's own (wazero fills the function table entry by entry,
// binds the exports, allocates their stacks; wasmtime makes a store and an
// instance, and unmaps its memory when it closes: docs/performance-notebook.md),
// and a reset costs a copy of the blocks the run wrote. The memory is
// reset through its bytes (instance.linear): the host's on wazero, the
// engine's on wasmtime, whose copy-on-write mapping of the image is
// checked when the instance is made (vmem.MapsImage) before the reset treats
// the pages the run did not write as the image's and cooling reverts to
// them.
//
// Reset, the instance is the image's again in everything its code can
// read: its linear memory byte for byte (vmem.ResetBlocks), its exported mutable
// globals (the image's values), its exchange buffer, and its open files
// (the Python guest's: engine.FileTable, the host's table of them,
// emptied; the image has none open: makeImage checks). What else an
// instance holds cannot carry anything from one run to the next: its
// tables, which the guest's code cannot write (image.reusable:
// meter.WritesTables), the rest of its WASI state, which no import changes
// (the QuickJS guest's fd_close is stateless: internal/engine/wazero.go;
// on wasmtime the WASI functions are the host's own and keep none:
// internal/engine/wasmtime/imports.go), its store (wasmtime), whose data
// (wasmtimeState) holds the run's context only while an export runs and
// whose memory limit is set again for every run, and the meter's poll
// countdown (meter.go), which only decides how soon the guest next polls
// the host: no later than a new instance's. A run whose memory
// grew, that was stopped, trapped, abandoned or suspended is not recycled:
// its instance is closed (its memory may become a spare, pool.go). A
// session's instance is recycled when the session lets it go (closed,
// reset, or suspended to bytes: session.go) and its programs all settled by
// themselves, unless its memory grew or runs of more than one tenant used
// it. And, as a second wall should a reset ever miss something, a recycled
// instance serves only runs of the tenant whose run it served
// (Program.Tenant; pool.take): runs of other tenants take new ones.
//
// A recycled instance is kept *hot*, its pages backed (the run wrote them:
// the next run takes no fault on them), or *cooled* (cool): its memory
// reverted to the image's file, its exports unbound, so that it holds
// about what a new restored instance does (BenchmarkPool_idleRSS: 0.5 MiB
// resident hot, 0.04 MiB cooled or restored). The pool keeps at most
// pool.hot hot ones, as many as can run at once and as many again
// finishing; the others are cooled. A run's own instance back a moment later is hot unless that
// many already are: the hot path, a few runs at a time, never cools.

// recycle gives the run's instance to the pool, reset, and reports whether
// it did; when it did not, the caller closes the instance. It is called by
// the goroutine that finishes the run, with status and e as run.finish has
// them.
func (r *run) recycle(status int32, e *RunError) bool {
	inst, p := r.inst, r.rt.pool
	// Settled by itself: a result, or an error the program threw.
	settled := status == abi.StatusDone && r.guestErr == nil || status == abi.StatusError && r.guestErr != nil
	if p == nil || e != nil || !settled || r.stopped != nil || r.suspension != nil {
		return false
	}
	r.mu.Lock()
	abandoned := r.abandoned
	r.mu.Unlock()
	return !abandoned && r.rt.recycle(inst, r.prog.Tenant)
}

// recycle resets inst, done with its runs, all of tenant, and gives it to
// the pool, and reports whether it did; when it did not, the caller closes
// the instance. Beside a run's own instance (run.recycle), a session's
// takes this way once the session no longer needs it (session.go): closed,
// reset, or suspended to bytes.
func (rt *Runtime) recycle(inst *instance, tenant string) bool {
	p := rt.pool
	if p == nil || rt.image == nil || !rt.image.reusable || !p.wants() {
		return false
	}
	if !inst.reset(rt.image, uint64(abi.MemoryPages(rt.limits.MemoryBytes))*abi.PageSize, !p.hotRoom()) {
		return false
	}
	inst.recycled, inst.tenant = true, tenant
	return p.recycle(inst)
}

// reset makes the instance, restored from img and done with its run, the
// image's again, with its memory capped at limit, and reports whether it
// could: not when the memory is not the image's size (it grew) or did not
// start as the image's, nor when a global cannot be set. With cold, the
// instance is cooled (cool) where it can be, else its memory is reset
// block by block.
func (inst *instance) reset(img *image, limit uint64, cold bool) bool {
	m, buf := inst.memory, inst.linear()
	if m.image != img || len(buf) != len(img.memory) || uint64(inst.mem.Size()) != uint64(len(img.memory)) {
		return false
	}
	if inst.globals == nil {
		globals := make([]engine.Global, len(img.globals))
		for i, name := range img.globals {
			if globals[i] = inst.mod.Global(name); globals[i] == nil {
				return false
			}
		}
		inst.globals = globals
	}
	for i, g := range inst.globals {
		if !g.Set(img.globalValues[i]) {
			return false
		}
	}
	if ft, ok := inst.mod.(engine.FileTable); ok {
		ft.ResetFiles()
	}
	inst.cold = false
	if !cold || !inst.cool() {
		vmem.ResetBlocks(buf, img.memory, m.cow, &inst.scratch)
	}
	m.refused = false
	inst.bufPtr, inst.bufCap = img.bufPtr, img.bufCap
	inst.setMemoryLimit(limit)
	return true
}

// cool reverts the instance's memory, the image mapped copy-on-write, to
// the image's file (revert: the bytes are the image's, and no page is
// backed), and drops its bound exports and its scratch, and reports
// whether it could: not when its memory is a copy of the image (then it
// stays hot).
func (inst *instance) cool() bool {
	if !inst.memory.cow || !vmem.Revert(inst.linear()) {
		return false
	}
	inst.unbind()
	inst.scratch, inst.cold = nil, true
	return true
}

// hotRoom reports whether the pool has room for one more hot recycled
// instance (recycle checks again).
func (p *pool) hotRoom() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hotIdle() < p.hot
}

// hotIdle counts the idle instances that are recycled and hot. The caller
// holds p.mu.
func (p *pool) hotIdle() int {
	n := 0
	for _, inst := range p.idle {
		if inst.recycled && !inst.cold {
			n++
		}
	}
	return n
}

// The pool keeps up to recycleFactor times its size of idle instances when
// runs give theirs back: the filler keeps its size of new ones (for any
// tenant), so without the margin a run's own, back a moment later, would
// find the pool full, and every run would cost a restore all the same.
const recycleFactor = 2

// wants reports whether the pool takes recycled instances (it is open).
func (p *pool) wants() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.closed
}

// recycle takes a reset instance as idle, charged as the pool's own are,
// and reports whether it did: not once the pool is closed, nor when the
// committed memory cap has no room for it or runs wait for it. A pool that
// holds recycleFactor times its size gives up its oldest recycled instance
// for it (the filler keeps size new ones: pool.refillOne), so that the
// recycled instances are those of the tenants that ran last. A hot
// instance that finds hot of them idle already is cooled first.
func (p *pool) recycle(inst *instance) bool {
	p.mu.Lock()
	if !inst.cold && p.hotIdle() >= p.hot {
		p.mu.Unlock()
		inst.cool() // where it cannot be, it stays hot
		p.mu.Lock()
	}
	var evicted *instance
	if len(p.idle) >= recycleFactor*p.size {
		for i, c := range p.idle {
			if c.recycled {
				evicted = c
				n := len(p.idle) - 1
				copy(p.idle[i:], p.idle[i+1:])
				p.idle[n] = nil
				p.idle = p.idle[:n]
				p.rt.unchargePool(p.charge)
				break
			}
		}
	}
	ok := !p.closed && len(p.idle) < recycleFactor*p.size && p.rt.chargePool(p.charge)
	if ok {
		p.idle = append(p.idle, inst)
		p.recycled.Add(1)
		if inst.cold {
			p.cooled.Add(1)
		}
	}
	p.mu.Unlock()
	if evicted != nil {
		evicted.close(context.Background()) // its memory may become a spare
	}
	return ok
}
