// Package runners keeps goroutines with their grown stacks, for work
// that runs deep.
//
// A new goroutine starts with a small stack, and work that calls deep
// grows it, copying it each time it doubles. A run does: wazero's calls
// into the guest and the guest's calls into the host. In the profile of a
// trivial run end to end that was about a twentieth of its CPU time
// (docs/performance-notebook.md), and in `ptcx serve`'s, whose every
// execution started on a new goroutine, about 20 µs of each trivial
// execution (docs/performance.md, "The service path"). So a goroutine
// that finished its job waits a while for the next one instead of
// exiting, its stack grown: it is a runner. wasmhost keeps runners for
// the runs that wait (a run of the guest ptcx embeds starts on its
// caller's goroutine, and moves to one only if its first export leaves it
// waiting, so that Run can return at a deadline); serve keeps its own for
// its executions, and their resumes.
//
// At most max wait at once, each at most idleFor (New), and all of them
// leave once closing is closed: an idle owner keeps no goroutine for
// long. A job that finds no runner waiting starts one, so a job never
// queues behind another.
package runners

import (
	"sync"
	"time"
)

// Job is what a runner executes (wasmhost: a run's Execute).
type Job interface{ Execute() }

// Func is a function as a Job (serve: an execution's run, or its resume).
type Func func()

// Execute calls f.
func (f Func) Execute() { f() }

// Runners hands jobs to the goroutines waiting for one.
type Runners struct {
	work    chan Job // unbuffered: a send succeeds only into a waiting runner
	closing <-chan struct{}
	max     int
	idleFor time.Duration

	mu      sync.Mutex
	idle    int // runners waiting on work, or about to
	started int // runners started, ever
}

// New returns runners that leave once closing is closed, at most
// max waiting at once, each for at most idleFor.
func New(closing <-chan struct{}, max int, idleFor time.Duration) *Runners {
	return &Runners{work: make(chan Job), closing: closing, max: max, idleFor: idleFor}
}

// Start executes j on a runner: one that waits, else a new one.
func (rs *Runners) Start(j Job) {
	select {
	case rs.work <- j:
	default:
		rs.mu.Lock()
		rs.started++
		rs.mu.Unlock()
		go rs.serve(j)
	}
}

// serve executes j, then the jobs handed to it, until it has waited
// idleFor for one, or its owner closes, or enough runners wait.
func (rs *Runners) serve(j Job) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		j.Execute()
		j = nil // nothing of the run stays reachable from a waiting runner
		if !rs.wait() {
			return
		}
		if timer == nil {
			timer = time.NewTimer(rs.idleFor)
		} else {
			timer.Reset(rs.idleFor)
		}
		select {
		case j = <-rs.work:
			rs.done()
			timer.Stop()
		case <-timer.C:
			rs.done()
			return
		case <-rs.closing:
			rs.done()
			return
		}
	}
}

// wait counts a runner that is about to wait, and reports whether it may:
// not when max of them wait already.
func (rs *Runners) wait() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.idle >= rs.max {
		return false
	}
	rs.idle++
	return true
}

// done counts a runner that stopped waiting.
func (rs *Runners) done() {
	rs.mu.Lock()
	rs.idle--
	rs.mu.Unlock()
}

// Waiting reports how many runners wait.
func (rs *Runners) Waiting() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.idle
}

// Started reports how many runners were ever started: beside the jobs
// started, how many found none waiting.
func (rs *Runners) Started() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.started
}
