package wasmhost

import (
	"sync"
	"time"
)

// Runners: the goroutines runs execute on.
//
// A run executes on a goroutine of its own (run.run), so that Run can
// return at a deadline a guest did not come back from. A new goroutine
// starts with a small stack, and a run grows it, copying it each time it
// doubles, to the depth of wazero's calls into the guest and the guest's
// calls into the host: in the profile of a trivial run end to end, about a
// twentieth of its CPU time went to that (docs/performance-notebook.md). So the
// goroutine of a run that ended waits a while for the next run instead of
// exiting, its stack grown: it is a runner.
//
// At most maxIdleRunners wait at once, each at most runnerIdle, and all
// of them leave when the Runtime closes: an idle Runtime keeps no
// goroutine for long. A run that finds no runner waiting starts one.

// maxIdleRunners bounds the runners waiting for a run at once: as many as
// run at once on the 2-core machines we measure on, and as many again
// finishing.
const maxIdleRunners = 4

// runnerIdle is how long a runner waits for a run before it exits: runs
// a few a second apart reuse one, and a Runtime left idle holds none
// after it.
const runnerIdle = 500 * time.Millisecond

// job is what a runner executes: a run (run.execute).
type job interface{ execute() }

// runners hands jobs to the goroutines waiting for one.
type runners struct {
	work    chan job // unbuffered: a send succeeds only into a waiting runner
	closing <-chan struct{}
	max     int
	idleFor time.Duration

	mu   sync.Mutex
	idle int // runners waiting on work, or about to
}

// newRunners returns runners that leave once closing is closed, at most
// max waiting at once, each for at most idleFor.
func newRunners(closing <-chan struct{}, max int, idleFor time.Duration) *runners {
	return &runners{work: make(chan job), closing: closing, max: max, idleFor: idleFor}
}

// start executes j on a runner: one that waits, else a new one.
func (rs *runners) start(j job) {
	select {
	case rs.work <- j:
	default:
		go rs.serve(j)
	}
}

// serve executes j, then the jobs handed to it, until it has waited
// idleFor for one, or the Runtime closes, or enough runners wait.
func (rs *runners) serve(j job) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		j.execute()
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
func (rs *runners) wait() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.idle >= rs.max {
		return false
	}
	rs.idle++
	return true
}

// done counts a runner that stopped waiting.
func (rs *runners) done() {
	rs.mu.Lock()
	rs.idle--
	rs.mu.Unlock()
}

// waiting reports how many runners wait.
func (rs *runners) waiting() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.idle
}
