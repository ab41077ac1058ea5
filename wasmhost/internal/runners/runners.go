// Package runners keeps the goroutines runs execute on.
//
// A run executes on a goroutine of its own (run.run), so that Run can
// return at a deadline a guest did not come back from (a run of the guest
// ptcx embeds starts on its caller's goroutine, and comes here only if its
// first export leaves it waiting). A new goroutine
// starts with a small stack, and a run grows it, copying it each time it
// doubles, to the depth of wazero's calls into the guest and the guest's
// calls into the host: in the profile of a trivial run end to end, about a
// twentieth of its CPU time went to that (docs/performance-notebook.md). So the
// goroutine of a run that ended waits a while for the next run instead of
// exiting, its stack grown: it is a runner.
//
// At most MaxIdle wait at once, each at most IdleFor, and all
// of them leave when the Runtime closes: an idle Runtime keeps no
// goroutine for long. A run that finds no runner waiting starts one.
package runners

import (
	"sync"
	"time"
)

// MaxIdle bounds the runners waiting for a run at once: as many as
// run at once on the 2-core machines we measure on, and as many again
// finishing.
const MaxIdle = 4

// IdleFor is how long a runner waits for a run before it exits: runs
// a few a second apart reuse one, and a Runtime left idle holds none
// after it.
const IdleFor = 500 * time.Millisecond

// Job is what a runner executes: a run (a run's Execute).
type Job interface{ Execute() }

// Runners hands jobs to the goroutines waiting for one.
type Runners struct {
	work    chan Job // unbuffered: a send succeeds only into a waiting runner
	closing <-chan struct{}
	max     int
	idleFor time.Duration

	mu   sync.Mutex
	idle int // runners waiting on work, or about to
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
		go rs.serve(j)
	}
}

// serve executes j, then the jobs handed to it, until it has waited
// idleFor for one, or the Runtime closes, or enough runners wait.
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
