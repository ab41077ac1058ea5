package bench

import (
	"context"
	"time"
)

// afterSession is one after_session sample: the feeds of a new session
// and its Close, untimed, then one plain run of the job's program, timed:
// what a run pays for the session that just closed beside it.
func afterSession(ctx context.Context, j Job, open OpenFunc, run RunFunc) (time.Duration, error) {
	s, err := open(ctx)
	if err != nil {
		return 0, err
	}
	err = runFeeds(ctx, j, s)
	if cerr := s.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	start := time.Now()
	err = run(ctx, j.Warmup())
	return time.Since(start), err
}
