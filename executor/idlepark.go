package executor

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ptcx/ptcx/wasmhost"
)

// Idle parking (Config.WithParkIdle): a run_code program that has waited
// the grace with nothing to run is suspended at that idle point
// (wasmhost.Program.SuspendIdle), and its instance and committed memory go
// back to the sandbox. Unlike a park for the caller (park.go), it stays
// inside the call: the goroutine that runs run_code's body waits until one
// of the program's calls in flight answers, its next timer is due, its wall
// deadline comes or its caller cancels, then resumes it attached
// (wasmhost.Resumption.Attach: the calls in flight answer the resumed run,
// none is dispatched again) with the time parked counted
// (Resumption.Waited). The scheduler is not settled at such a park: it
// stays with the run, its calls go on through every phase meanwhile
// (post-execute, notifications, the ledger) exactly as if the program were
// live, and it serves the resumed run's calls. The caller sees one result.
// A call on the inline path (inline.go) runs under the run_code body's
// context here (scheduler.outlive): at the grace the sandbox hands the run
// over to a new goroutine and parks it, while the call goes on on the
// sandbox's old one and answers the resumed run.
//
// Ending while parked is ending live: at the wall deadline the run fails
// as a wall-time timeout, and on cancellation as a cancelled run, with the
// logs written before (wasmhost.Suspended.End); the calls in flight are
// stopped by the nested calls' context, which ends then too, and settled
// with the run. A resume the sandbox has no room for (BUSY) is retried,
// idleRetryFirst doubling to idleRetryMax, until one of those.

// Backoff of a resume the sandbox had no room for: the first retry comes
// soon (a run finishing frees room within milliseconds), later ones no
// more often than once a second, so that parked runs waiting for room
// cost nothing noticeable.
const (
	idleRetryFirst = 10 * time.Millisecond
	idleRetryMax   = time.Second
)

// IdleParkStats counts an executor's idle parks (Config.WithParkIdle).
type IdleParkStats struct {
	Parked  int   // runs idle-parked now
	Parks   int64 // idle parks so far
	Retries int64 // resumes the sandbox had no room for (BUSY), retried so far
}

type idleCounts struct {
	parked, parks, retries atomic.Int64
}

// IdleParkStats returns the executor's idle-park counters. It is safe to
// call at any time.
func (e *Executor) IdleParkStats() IdleParkStats {
	return IdleParkStats{Parked: int(e.idle.parked.Load()), Parks: e.idle.parks.Load(), Retries: e.idle.retries.Load()}
}

// idleResumer is a code runtime that can resume idle parks, and says
// when it closes (a parked run then ends as a live one would).
type idleResumer interface {
	resumer
	recycler
	Done() <-chan struct{}
}

// checkParkIdle refuses an idle park the configuration cannot make.
func (c Config) checkParkIdle() error {
	if c.parkIdle < 0 {
		return fmt.Errorf("executor: an idle-park grace of %v is negative (0 means never park idle runs)", c.parkIdle)
	}
	if _, ok := c.runtime.(idleResumer); c.parkIdle > 0 && c.runtime != nil && !ok {
		return errors.New("executor: WithParkIdle needs a code runtime that can resume runs (a *wasmhost.Runtime); this one cannot")
	}
	return nil
}

// idleGrace is the run's wasmhost.Program.SuspendIdle: the executor's
// grace, but for a session's program, which is never parked.
func (c *codeRun) idleGrace() time.Duration {
	if c.x.session != "" {
		return 0
	}
	return c.x.e.cfg.parkIdle
}

// resumeIdle waits out every idle park of c's run and resumes it, until
// the run ends or parks for its caller (park.go); p is the program the run
// started with, s its scheduler.
func (c *codeRun) resumeIdle(ctx context.Context, p wasmhost.Program, s *scheduler, out wasmhost.Outcome, err error) (wasmhost.Outcome, error) {
	for err == nil && out.Suspended != nil && out.Suspended.Idle {
		out, err = c.idlePark(ctx, p, s, out.Suspended)
	}
	return out, err
}

// idlePark waits while sp is parked, then resumes it (or ends it, at the
// wall deadline or on cancellation) and returns what the run gave.
func (c *codeRun) idlePark(ctx context.Context, p wasmhost.Program, s *scheduler, sp *wasmhost.Suspended) (wasmhost.Outcome, error) {
	e := c.x.e
	rt := e.cfg.runtime.(idleResumer) // a run parks idle only with one (checkParkIdle)
	e.idle.parks.Add(1)
	e.idle.parked.Add(1)
	c.idleParks++
	from := time.Now()
	defer func() {
		e.idle.parked.Add(-1)
		c.idleParked += time.Since(from)
	}()
	end := func(cause error) (wasmhost.Outcome, error) {
		out, err := sp.End(cause)
		rt.RecycleSnapshot(sp)
		return out, err
	}
	wall := time.NewTimer(time.Until(p.Deadline))
	defer wall.Stop()
	wake := time.NewTimer(time.Until(sp.WakeAt))
	if sp.WakeAt.IsZero() {
		wake.Stop()
	}
	defer wake.Stop()
	select {
	case <-sp.Answered():
	case <-wake.C:
	case <-p.Recheck: // a call was held for an approval (park_approval.go): the resumed run asks
		c.park.recheck <- struct{}{} // taken just now: the buffer has room
	case <-wall.C:
		return end(context.DeadlineExceeded)
	case <-ctx.Done():
		return end(context.Cause(ctx))
	case <-rt.Done():
		return end(wasmhost.ErrClosed)
	}
	for backoff := idleRetryFirst; ; backoff = min(2*backoff, idleRetryMax) {
		out, err := rt.Resume(ctx, sp.Snapshot, s, wasmhost.Resumption{Limits: p.Limits, Deadline: p.Deadline,
			Suspend: p.Suspend, SuspendIdle: p.SuspendIdle, Recheck: p.Recheck, Tenant: p.Tenant, Attach: sp, Recycle: sp, Waited: time.Since(sp.At)})
		switch {
		case sp.Snapshot == nil: // the run started (Recycle took the snapshot): its outcome is the run's
			return out, err
		case errors.Is(err, wasmhost.ErrClosed):
			return end(wasmhost.ErrClosed)
		case ctx.Err() != nil: // cancelled as it waited for room
			return end(context.Cause(ctx))
		case !errors.Is(err, wasmhost.ErrBusy):
			rt.RecycleSnapshot(sp)
			return out, err
		}
		e.idle.retries.Add(1)
		retry := time.NewTimer(backoff)
		select {
		case <-retry.C:
		case <-wall.C:
			retry.Stop()
			return end(context.DeadlineExceeded)
		case <-ctx.Done():
			retry.Stop()
			return end(context.Cause(ctx))
		case <-rt.Done():
			retry.Stop()
			return end(wasmhost.ErrClosed)
		}
	}
}
