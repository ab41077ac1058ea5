package wasmhost

import (
	"errors"
	"runtime"
	"runtime/metrics"
	"time"

	"github.com/ptcx/ptcx/wasmhost/internal/admit"
	"github.com/ptcx/ptcx/wasmhost/internal/cpuclock"
)

// Compute time is the CPU time the guest used: what the thread running an
// export spent on it, not what its neighbours took meanwhile.
//
// Reading a thread's CPU clock is a system call (cpuclock.Now), and a nested
// call's export lasts a few microseconds, so the clock is read only where
// it pays. Wall time inside an export is an upper bound of the CPU time it
// used, so a short export is charged its wall time. From the first poll of
// an export that has run cpuClockAfter (the guest polls every 20 to 50 µs
// of JavaScript, meter.go), the goroutine is locked to its OS thread until
// the export ends, and the export is charged the wall time up to that poll
// plus the thread's CPU time after it. The poll and the watchdog then
// judge the compute deadline in CPU time:
//
//   - the deadline of an export (run.deadline) is where its wall time would
//     exhaust the budget; no earlier can its CPU time. A poll past it reads
//     the thread's clock, stops the guest if the CPU time is spent, and
//     otherwise moves the deadline to where the rest of the budget would
//     end at full speed (a few reads per export, however long);
//   - the watchdog, a grace past that deadline, reads the clock of the
//     guest's thread by its id from its own thread: a guest that was only
//     descheduled has used little and is given the rest; one stuck in native
//     code that does not poll burns its CPU time and is abandoned. An
//     export that never reached cpuClockAfter at a poll is judged in wall
//     time, as are exports where the OS has no thread clock (cpuclock.Supported).
//
// The wall-time limit stays wall time.

// cpuClockAfter is how long an export runs, in wall time, before it is
// charged CPU time (see above): the two clock reads and the thread lock
// then cost under 0.2% of it, and a short export pays nothing.
const cpuClockAfter = int64(time.Millisecond)

// slotQuantum is how long a guest executes in its slot before it gives the
// slot to a guest waiting for one, at its next poll: guests take turns, so
// a long computation delays its neighbours by at most a quantum a turn, and
// the turns go round the tenants (Program.Tenant) before they come back to
// one tenant's next guest.
// Only an export charged CPU time yields (waiting for the slot again then
// costs it nothing).
const slotQuantum = int64(10 * time.Millisecond)

// tenantQuantum is the shorter turn a guest takes when a guest of another
// tenant waits for a slot: a tenant's short request among another tenant's
// long computations waits about a millisecond for its slot, not ten, while
// the computations of one tenant (or of a host without tenants) still take
// turns of slotQuantum among themselves. A hand-off costs tens of
// microseconds, a few percent of a turn.
const tenantQuantum = int64(time.Millisecond)

// goQuantum is how often a guest that computes (charged CPU time) looks for
// goroutines ready to run and, when there are, lets them run before it goes
// on (runtime.Gosched). Guests hold as many slots as there are cores, so
// without it a flood of computations would leave the rest of the process
// (a server's handlers, the tools, the runs that start or end) to Go's
// preemption, every 10 ms per hand-off: a neighbour's short request, which
// passes through a dozen goroutines, took 100s of ms. The look costs under
// a microsecond a millisecond; a yield costs the computation only when
// something else was ready (13 to 18 µs on its locked thread).
const goQuantum = int64(time.Millisecond)

// turn is what a guest that computes gives up at a poll (run.takeTurn).
type turn uint8

const (
	turnNone turn = iota
	turnSlot      // its guest slot, to a guest waiting for one
	turnGo        // its thread, to the goroutines ready to run
)

// begin starts an export: it takes a guest slot (waiting for one, but not
// past the wall deadline or the run's end) and sets the export's deadline,
// which the poll import enforces and the watchdog backs up. compute says
// whether the export's time counts toward the compute limit; when it does,
// an exhausted limit fails at once. The watchdog stays armed across
// exports and is armed again only when it would fire too late for this
// one; when it fires early, run.run arms it again.
func (r *run) begin(compute bool) *RunError {
	now, e := r.takeSlot()
	if e != nil {
		return e
	}
	d := r.wallAt
	if compute {
		left := int64(r.limits.ComputeTime) - r.compute.Load()
		switch {
		case left <= 0:
			r.giveSlot()
			return r.timeout(false, errDeadline)
		case now >= r.wallAt:
			r.giveSlot()
			return r.timeout(true, errDeadline)
		}
		d = min(d, now+left)
	}
	r.metered = compute
	r.goAt = now
	r.deadline.Store(d)
	r.inExport.Store(now)
	if at := r.watchAt.Load(); at == 0 || at > d+int64(grace) {
		r.armWatchdog(d + int64(grace))
	}
	return nil
}

// end ends an export: it charges its time (wall, or CPU time once the
// clock was started). The run keeps its slot for its next export until it
// waits (run.loop, run.idle) or ends (run.finish): a run that goes from one
// export to the next without waiting takes its turn for the slot once, not
// once per export, so a short run among long ones waits one turn, not
// three. It returns the instant the export ended (see run.since).
func (r *run) end() int64 {
	now := r.since()
	if r.metered {
		used := now - r.inExport.Load()
		if r.cpuOn {
			used = r.stopCPU()
		}
		r.compute.Add(used)
	}
	r.inExport.Store(0)
	r.deadline.Store(0)
	if r.inst != nil {
		r.memory.Store(int64(r.inst.mem.Size()))
	}
	return now
}

// armWatchdog sets the watchdog to fire at the instant at (see run.since).
func (r *run) armWatchdog(at int64) {
	r.watchAt.Store(at)
	r.watchdog.Reset(time.Duration(at - r.since()))
}

// polled is the poll import's judgement, at instant now, under r.mu: it
// starts the CPU clock of a long export, stops the guest past its
// deadline, and reports whether the guest should give its slot to a
// waiting one or its thread to ready goroutines (run.takeTurn).
func (r *run) polled(now int64) turn {
	start := r.inExport.Load()
	if cpuclock.Supported && r.metered && !r.cpuOn && now-start >= cpuClockAfter {
		r.startCPU(now - start)
	}
	if d := r.deadline.Load(); d != 0 && now >= d {
		r.overdue(now, d)
	}
	if !r.cpuOn {
		return turnNone
	}
	if held := now - r.slotAt; held >= tenantQuantum && held >= r.slotLook {
		if r.yieldsTo(held) {
			return turnSlot
		}
		r.slotLook = held + tenantQuantum // look again a millisecond from now, not at every poll (the check takes the gate's lock)
	}
	if now-r.goAt >= goQuantum {
		r.goAt = now
		if goroutinesReady() {
			return turnGo
		}
	}
	return turnNone
}

// readyMetric counts the goroutines ready to run that are not running.
const readyMetric = "/sched/goroutines/runnable:goroutines"

// goroutinesReady reports whether goroutines wait for a thread to run on
// (false where the runtime does not say).
func goroutinesReady() bool {
	s := [1]metrics.Sample{{Name: readyMetric}}
	metrics.Read(s[:])
	return s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > 0
}

// takeTurn gives up what polled said, from inside a poll but without r.mu.
// Letting goroutines run costs no compute time: the thread's clock does
// not advance while the guest is off it.
func (r *run) takeTurn(t turn) {
	switch t {
	case turnSlot:
		r.yieldSlot()
	case turnGo:
		runtime.Gosched()
	}
}

// overdue judges an export whose deadline d has come: past the wall
// deadline, or with its compute budget spent, the guest stops; otherwise
// (CPU time ran slower than wall time) the deadline moves to where the
// rest of the budget ends at the earliest.
func (r *run) overdue(now, d int64) {
	if d == r.wallAt {
		r.stop(r.timeout(true, errDeadline))
	}
	if !r.cpuOn {
		r.stop(r.timeout(false, errDeadline))
	}
	left := int64(r.limits.ComputeTime) - (r.compute.Load() + cpuclock.Now() - r.cpuBase)
	if left <= 0 {
		r.stop(r.timeout(false, errDeadline))
	}
	r.deadline.Store(min(r.wallAt, now+left))
}

// startCPU locks the guest's goroutine to its thread and starts charging
// the thread's CPU time, after wall time elapsed in the export.
func (r *run) startCPU(elapsed int64) {
	runtime.LockOSThread()
	tid := cpuclock.ThreadID()
	base := cpuclock.Now() - elapsed
	r.cpuMu.Lock()
	r.cpuTid, r.cpuBase = tid, base
	r.cpuMu.Unlock()
	r.cpuOn = true
}

// stopCPU returns the export's charge (the wall time before startCPU plus
// the CPU time since) and unlocks the thread.
func (r *run) stopCPU() int64 {
	used := cpuclock.Now() - r.cpuBase
	r.cpuMu.Lock()
	r.cpuTid = 0
	r.cpuMu.Unlock()
	r.cpuOn = false
	runtime.UnlockOSThread()
	return used
}

// cpuUsed is the compute time used so far, read by the watchdog from
// another goroutine while the guest's thread is charged CPU time (holding
// cpuMu keeps the guest's goroutine on that thread meanwhile); false when
// it is not.
func (r *run) cpuUsed() (int64, bool) {
	r.cpuMu.Lock()
	defer r.cpuMu.Unlock()
	if r.cpuTid == 0 {
		return 0, false
	}
	cpu, ok := cpuclock.Of(r.cpuTid)
	if !ok {
		return 0, false
	}
	return r.compute.Load() + cpu - r.cpuBase, true
}

// takeSlot takes one of the Runtime's guest slots for an export, waiting
// its tenant's turn for it (not past the wall deadline or the run's end),
// and returns the instant it has it (run.since), which begin takes as the
// export's start. A run that holds one keeps it, unless it has for a
// quantum and a guest waits: then it takes its turn again (as polled does
// inside an export).
func (r *run) takeSlot() (int64, *RunError) {
	if r.hasSlot {
		now := r.since()
		if held := now - r.slotAt; held < tenantQuantum || !r.yieldsTo(held) {
			return now, nil
		}
		r.giveSlot()
	}
	if err := r.rt.slots.Acquire(r.ctx, r.wallDeadline, r.prog.Tenant, 0); err != nil {
		if errors.Is(err, admit.ErrTimeout) {
			return 0, r.timeout(true, errDeadline)
		}
		return 0, r.cancelled()
	}
	now := r.since()
	r.hasSlot = true
	r.slotAt, r.slotLook = now, 0
	return now, nil
}

// yieldsTo reports whether a run that has held its slot for held should
// give it to a waiting guest: one of another tenant after tenantQuantum,
// any after slotQuantum.
func (r *run) yieldsTo(held int64) bool {
	same, other := r.rt.slots.WaitingBy(r.prog.Tenant)
	return other > 0 || (same > 0 && held >= slotQuantum)
}

// giveSlot gives the export's slot back.
func (r *run) giveSlot() {
	if r.hasSlot {
		r.hasSlot = false
		r.rt.slots.Release(0)
	}
}

// yieldSlot gives the slot to the guest whose turn it is (the next
// tenant's, round robin, gate.go) and waits its turn for one again, from inside a poll but without r.mu (Run may abandon the run
// meanwhile). The wait costs no compute time: the thread's clock does not
// advance while it sleeps.
func (r *run) yieldSlot() {
	r.giveSlot()
	if _, e := r.takeSlot(); e != nil {
		r.stop(e)
	}
}
