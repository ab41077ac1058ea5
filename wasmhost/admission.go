package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/admit"
	"github.com/ptcx/ptcx/wasmhost/internal/vmem"
)

// fallbackCommittedMemory is the cap where the machine's memory cannot be
// read (other OSes): 16 runs at the default memory limit.
const fallbackCommittedMemory = 4 << 30

// admissionConfig is the part of Config about how many guests run and how
// many runs are admitted. Zero fields mean the defaults.
type admissionConfig struct {
	slots     int
	maxRuns   int
	maxMemory int64
	wait      time.Duration
}

// WithGuestSlots sets how many guests execute at once: a run holds a slot
// only while its guest executes (not while it waits on tools or timers, nor
// while a tool body runs), guests wait for one round robin across tenants
// (Program.Tenant) and in FIFO order within one, and a guest
// computing for long gives its slot to a waiting one every 10 ms. Fewer
// slots than cores leave cores to the tools; more make guests compete for
// cores, which their compute time does not count but their wall time does.
// Zero means the default, runtime.GOMAXPROCS(0) at New.
func (c Config) WithGuestSlots(n int) Config {
	c.admission.slots = n
	return c
}

// WithMaxRuns caps the runs admitted at once, executing or waiting on their
// tools. Zero means the default, DefaultRunsPerSlot times the guest slots.
func (c Config) WithMaxRuns(n int) Config {
	c.admission.maxRuns = n
	return c
}

// WithMaxCommittedMemory caps the guest memory the admitted runs may use,
// summed: each run is admitted with its memory limit (Limits.MemoryBytes)
// committed, so the guests of one Runtime can never hold more than the cap
// together, whatever they do, and a run that is admitted never fails for
// what its neighbours use. A run whose limit does not fit waits (see
// WithAdmissionWait). Runs that ask for less memory (limits.memory_mb)
// commit less, and more of them fit. The cap must be at least
// api.MinMemoryBytes. Zero means the default, DefaultCommittedMemoryPercent of
// the machine's memory (4 GiB where it cannot be read), and never less than
// the Runtime's memory limit, so one run at the limit always fits.
//
// (Charging what the guests have grown to instead would admit more idle
// runs, but then either the sum passes the cap, or a growth is refused and
// runs that grow together all fail: 16 programs of 120 MiB under a 1 GiB
// cap would all fail, where here 8 run and 8 wait their turn.)
func (c Config) WithMaxCommittedMemory(bytes int64) Config {
	c.admission.maxMemory = bytes
	return c
}

// WithAdmissionWait sets how long a run waits for admission before Run
// fails with ErrBusy; a run never waits past its wall deadline or its
// context. Zero or less: a run that cannot be admitted at once fails at
// once. Default: DefaultAdmissionWait.
func (c Config) WithAdmissionWait(d time.Duration) Config {
	c.admission.wait = max(d, 0)
	return c
}

// setAdmission resolves the admission config's defaults for rt.
func (rt *Runtime) setAdmission(a admissionConfig) error {
	switch {
	case a.slots < 0:
		return fmt.Errorf("wasmhost: %d guest slots: the count must be positive (0 means the default)", a.slots)
	case a.maxRuns < 0:
		return fmt.Errorf("wasmhost: a cap of %d runs: the cap must be positive (0 means the default)", a.maxRuns)
	case a.maxMemory < 0:
		return fmt.Errorf("wasmhost: a cap of %d bytes of committed memory: the cap must be positive (0 means the default)", a.maxMemory)
	case a.maxMemory > 0 && a.maxMemory < api.MinMemoryBytes:
		return fmt.Errorf("wasmhost: a cap of %d bytes of committed memory is below the minimum of %d bytes (%d MiB): "+
			"not even a new instance would fit", a.maxMemory, api.MinMemoryBytes, api.MinMemoryBytes>>20)
	case a.maxMemory > 0 && a.maxMemory < rt.limits.MemoryBytes:
		return fmt.Errorf("wasmhost: a cap of %d MiB of committed memory is below the Runtime's memory limit of %d MiB: "+
			"a run at the limit could never be admitted; lower the limit (WithLimits) or raise the cap", a.maxMemory>>20, rt.limits.MemoryBytes>>20)
	}
	if a.slots == 0 {
		a.slots = runtime.GOMAXPROCS(0)
	}
	if a.maxRuns == 0 {
		a.maxRuns = DefaultRunsPerSlot * a.slots
	}
	if a.maxMemory == 0 {
		a.maxMemory = max(defaultCommittedMemory(), rt.limits.MemoryBytes)
	}
	rt.slots = admit.New(a.slots, 0)
	rt.admission = admit.New(a.maxRuns, a.maxMemory)
	rt.admitWait = a.wait
	return nil
}

// defaultCommittedMemory is the default cap on committed guest memory.
func defaultCommittedMemory() int64 {
	if total, ok := vmem.PhysicalMemory(); ok {
		return total / 100 * DefaultCommittedMemoryPercent
	}
	return fallbackCommittedMemory
}

// admit waits for r's admission: one run, with its memory limit committed.
// A run resuming from an idle suspension (r.taking) asks for its limit
// less the snapshot's charge, which becomes part of its commitment; it
// waits from the Resume, not from the run's start.
func (rt *Runtime) admit(ctx context.Context, r *run) error {
	bytes := int64(abi.MemoryPages(r.limits.MemoryBytes)) * abi.PageSize
	need, from := bytes, r.began
	if h := r.taking; h != nil {
		need, from = bytes-h.charge, time.Now()
	}
	admitted := func() error {
		r.committed = bytes
		if r.taking != nil {
			r.taking.takeOver()
		}
		return nil
	}
	if rt.admission.TryAcquire(r.prog.Tenant, need) {
		return admitted()
	}
	// Idle pooled instances, then resume spares, then recycled snapshot
	// buffers, then live idle sessions (suspended to bytes), give their
	// memory up to a run that does not fit beside them.
	for rt.pool.yield() || rt.otherPool().yield() || rt.yieldResumeSpare() || rt.yieldSnapshotBuffer() ||
		rt.sessions.yield() || rt.otherSessions().yield() {
		if rt.admission.TryAcquire(r.prog.Tenant, need) {
			return admitted()
		}
	}
	deadline := r.wallDeadline
	if d := from.Add(rt.admitWait); d.Before(deadline) {
		deadline = d
	}
	var err error
	if rt.admitWait > 0 {
		wctx, cancel := context.WithCancelCause(ctx)
		stop := context.AfterFunc(rt.closing, func() { cancel(ErrClosed) })
		err = rt.admission.Acquire(wctx, deadline, r.prog.Tenant, need)
		stop()
		cancel(nil)
		if err == nil {
			return admitted()
		}
	}
	switch {
	case errors.Is(err, ErrClosed):
		return ErrClosed
	case err != nil && !errors.Is(err, admit.ErrTimeout):
		return &RunError{Kind: api.KindAbort, Message: "the run was cancelled while it waited for the sandbox", Cause: err}
	}
	u := rt.Usage()
	suspended := ""
	if u.SuspendedBytes > 0 {
		suspended = fmt.Sprintf(" and %d MiB of suspended runs' snapshots", u.SuspendedBytes>>20)
	}
	return fmt.Errorf("%w: %d runs are admitted (the cap is %d) with %d MiB of guest memory committed%s (the cap is %d MiB; this run needs %d MiB), "+
		"and %d runs wait; this run waited %v: retry later",
		ErrBusy, u.Runs, u.MaxRuns, u.CommittedBytes>>20, suspended, u.MaxCommittedBytes>>20, (bytes+1<<20-1)>>20, u.Waiting, time.Since(from).Round(time.Millisecond))
}

// Usage is a snapshot of what a Runtime's runs use, for metrics and tests.
type Usage struct {
	Runs              int   // runs admitted and not finished (waiting on tools or executing)
	Waiting           int   // runs waiting for admission
	CommittedBytes    int64 // the guest memory of the admitted runs, summed (see WithMaxCommittedMemory); the warm pool's is in PoolStats.Bytes
	SuspendedBytes    int64 // the snapshots of idle suspensions held in this process (Suspended.Idle), summed: charged against MaxCommittedBytes beside CommittedBytes
	Executing         int   // guests executing now, each holding a slot
	WaitingForSlot    int   // guests ready to execute, waiting for a slot
	MaxRuns           int   // the cap on Runs (WithMaxRuns)
	MaxCommittedBytes int64 // the cap on CommittedBytes (WithMaxCommittedMemory)
	Slots             int   // the cap on Executing (WithGuestSlots)
}

// Usage returns the Runtime's current counters. It is safe to call at any
// time, concurrently with Run.
func (rt *Runtime) Usage() Usage {
	var u Usage
	rt.admission.Read(func(count int, bytes int64, waiting int) {
		u.Runs, u.CommittedBytes, u.Waiting = count, bytes-rt.pooledBytes-rt.suspendedBytes, waiting
		u.SuspendedBytes = rt.suspendedBytes
	})
	u.Executing, _, u.WaitingForSlot = rt.slots.Usage()
	u.MaxRuns, u.MaxCommittedBytes, u.Slots = rt.admission.MaxCount(), rt.admission.MaxBytes(), rt.slots.MaxCount()
	return u
}

// chargePool charges one pooled instance's bytes to admission's committed
// memory (not to its count of runs), if they fit and no run waits: the
// pool never takes memory a run is waiting for.
func (rt *Runtime) chargePool(bytes int64) bool {
	return rt.admission.Charge(bytes, rt.pooledCounter())
}

// pooledCounter is where rt's pooled instances are counted: its own
// pooledBytes, or its parent's for a language's Runtime (python.go), whose
// admission it shares, so that Usage counts every pool alike.
func (rt *Runtime) pooledCounter() *int64 {
	if rt.parent != nil {
		return &rt.parent.pooledBytes
	}
	return &rt.pooledBytes
}

// suspendedCounter is where the snapshots of rt's idle suspensions are
// counted: its own suspendedBytes, or its parent's for a language's
// Runtime, as pooledCounter.
func (rt *Runtime) suspendedCounter() *int64 {
	return &rt.root().suspendedBytes
}

// unchargePool gives back what chargePool charged: the instance was taken
// by a run (which committed its own memory) or discarded.
func (rt *Runtime) unchargePool(bytes int64) {
	rt.admission.Uncharge(bytes, rt.pooledCounter())
}
