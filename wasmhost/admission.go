package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"
)

// ErrBusy is returned by Run (errors.Is) when the run was not admitted in
// time: the Runtime had its maximum of runs, or of committed guest memory,
// for the whole admission wait. The program did not run; the same call may
// succeed later. The executor reports it as BUSY, a retryable code.
var ErrBusy = errors.New("wasmhost: the sandbox is busy")

// Defaults of the admission caps.
const (
	// DefaultAdmissionWait is how long a run waits for admission: longer
	// than a typical run, so that a burst queues rather than fails.
	DefaultAdmissionWait = 30 * time.Second
	// DefaultRunsPerSlot times the guest slots is the default cap on
	// concurrent runs. A run mostly waits on its tools, holding no slot,
	// and an idle run costs about 2 MB of host memory and a few goroutines:
	// 64 runs per core keep the cores busy when runs wait 98% of the time,
	// and bound idle instances to about 128 MB per core.
	DefaultRunsPerSlot = 64
	// DefaultCommittedMemoryPercent of the machine's memory (MemTotal of
	// /proc/meminfo, or the cgroup's memory.max when lower) is the default
	// cap on committed guest memory: the rest is for the host, the tools
	// and everything else on the machine.
	DefaultCommittedMemoryPercent = 50
	// fallbackCommittedMemory is the cap where the machine's memory cannot
	// be read (other OSes): 16 runs at the default memory limit.
	fallbackCommittedMemory = 4 << 30
)

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
// while a tool body runs), guests wait for one in FIFO order, and a guest
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

// WithMaxCommittedMemory caps the guest memory the admitted runs may use
// together: a run is admitted with its memory limit (Limits.MemoryBytes)
// committed, so a run never fails for memory its neighbours took. It must
// be at least the Runtime's memory limit. Zero means the default,
// DefaultCommittedMemoryPercent of the machine's memory (4 GiB where it
// cannot be read), and never less than the Runtime's memory limit.
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
	case a.maxMemory > 0 && a.maxMemory < rt.limits.MemoryBytes:
		return fmt.Errorf("wasmhost: a cap of %d bytes of committed memory is below the memory limit of one run (%d bytes): "+
			"no run could be admitted; raise the cap or lower the limit", a.maxMemory, rt.limits.MemoryBytes)
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
	rt.slots = newGate(a.slots, 0)
	rt.admission = newGate(a.maxRuns, a.maxMemory)
	rt.admitWait = a.wait
	return nil
}

// defaultCommittedMemory is the default cap on committed guest memory.
func defaultCommittedMemory() int64 {
	if total, ok := physicalMemory(); ok {
		return total / 100 * DefaultCommittedMemoryPercent
	}
	return fallbackCommittedMemory
}

// admit waits for r's admission: one run, with its memory limit committed.
func (rt *Runtime) admit(ctx context.Context, r *run) error {
	bytes := r.limits.MemoryBytes
	if rt.admission.tryAcquire(bytes) {
		return nil
	}
	deadline := r.wallDeadline
	if d := r.began.Add(rt.admitWait); d.Before(deadline) {
		deadline = d
	}
	var err error
	if rt.admitWait > 0 {
		wctx, cancel := context.WithCancelCause(ctx)
		stop := context.AfterFunc(rt.closing, func() { cancel(ErrClosed) })
		err = rt.admission.acquire(wctx, deadline, bytes)
		stop()
		cancel(nil)
		if err == nil {
			return nil
		}
	}
	switch {
	case errors.Is(err, ErrClosed):
		return ErrClosed
	case err != nil && !errors.Is(err, errGateTimeout):
		return &RunError{Kind: KindAbort, Message: "the run was cancelled while it waited for the sandbox", Cause: err}
	}
	u := rt.Usage()
	return fmt.Errorf("%w: %d runs are admitted (the cap is %d) with %d MiB of guest memory committed (the cap is %d MiB; this run needs %d MiB), "+
		"and %d runs wait; this run waited %v: retry later, or with a lower memory limit",
		ErrBusy, u.Runs, u.MaxRuns, u.CommittedBytes>>20, u.MaxCommittedBytes>>20, bytes>>20, u.Waiting, time.Since(r.began).Round(time.Millisecond))
}

// Usage is a snapshot of what a Runtime's runs use, for metrics and tests.
type Usage struct {
	Runs              int   // runs admitted and not finished (waiting on tools or executing)
	Waiting           int   // runs waiting for admission
	CommittedBytes    int64 // the memory limits of the admitted runs, summed
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
	u.Runs, u.CommittedBytes, u.Waiting = rt.admission.usage()
	u.Executing, _, u.WaitingForSlot = rt.slots.usage()
	u.MaxRuns, u.MaxCommittedBytes, u.Slots = rt.admission.maxCount, rt.admission.maxBytes, rt.slots.maxCount
	return u
}
