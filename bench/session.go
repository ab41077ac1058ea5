package bench

import (
	"context"
	"time"
)

// Sessions (session_feeds, after_session): a workload's feeds run one
// after the other in one session, which keeps the state each leaves for the
// next (ptcx.WithSessions for ptcx; one runtime for a peer).

// FeedSession is one live session of an implementation: Feed runs a feed
// in it and checks its answer; Close ends it.
type FeedSession interface {
	Feed(ctx context.Context, f SessionFeed) error
	Close(ctx context.Context) error
}

// OpenFunc opens a new session.
type OpenFunc func(ctx context.Context) (FeedSession, error)

// MeasureSessions measures a Session or AfterSession job for an in-process
// implementation whose sessions open opens and whose plain runs are run:
// Session times the feeds of one session per sample, its Close untimed;
// AfterSession runs them and closes the session, untimed, then times one
// run of the job's program. One session (and for AfterSession one run)
// warms up first.
func MeasureSessions(ctx context.Context, j Job, open OpenFunc, run RunFunc) (Raw, error) {
	raw := Raw{Samples: make([]float64, j.Samples)}
	for i := -1; i < j.Samples; i++ { // -1: the warm-up
		s, err := open(ctx)
		if err != nil {
			return Raw{}, err
		}
		start := time.Now()
		for _, f := range j.Feeds {
			if err := s.Feed(ctx, f); err != nil {
				_ = s.Close(ctx)
				return Raw{}, err
			}
		}
		took := time.Since(start)
		if err := s.Close(ctx); err != nil {
			return Raw{}, err
		}
		if j.Kind == AfterSession {
			start = time.Now()
			err = run(ctx, j.Warmup())
			took = time.Since(start)
			if err != nil {
				return Raw{}, err
			}
		}
		if i >= 0 {
			raw.Samples[i] = float64(took.Nanoseconds())
		}
	}
	return raw, nil
}
