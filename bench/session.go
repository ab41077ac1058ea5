package bench

import (
	"context"
	"time"
)

// Sessions (session_feeds, and after_session in after_session.go): a
// workload's feeds run one after the other in one session, which keeps the
// state each leaves for the next (ptcx.WithSessions for ptcx; one runtime
// for a peer).

// FeedSession is one live session of an implementation: Feed runs a feed
// in it and checks its answer; Close ends it.
type FeedSession interface {
	Feed(ctx context.Context, f SessionFeed) error
	Close(ctx context.Context) error
}

// OpenFunc opens a new session.
type OpenFunc func(ctx context.Context) (FeedSession, error)

// MeasureSessions measures a Session or AfterSession job for an in-process
// implementation whose sessions open opens and whose plain runs are run.
// One session (and for AfterSession one run) warms up first.
func MeasureSessions(ctx context.Context, j Job, open OpenFunc, run RunFunc) (Raw, error) {
	sample := sessionFeeds
	if j.Kind == AfterSession {
		sample = afterSession
	}
	raw := Raw{Samples: make([]float64, j.Samples)}
	for i := -1; i < j.Samples; i++ { // -1: the warm-up
		took, err := sample(ctx, j, open, run)
		if err != nil {
			return Raw{}, err
		}
		if i >= 0 {
			raw.Samples[i] = float64(took.Nanoseconds())
		}
	}
	return raw, nil
}

// sessionFeeds is one session_feeds sample: the feeds of a new session,
// timed; its Close, untimed.
func sessionFeeds(ctx context.Context, j Job, open OpenFunc, _ RunFunc) (time.Duration, error) {
	s, err := open(ctx)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	err = runFeeds(ctx, j, s)
	took := time.Since(start)
	if cerr := s.Close(ctx); err == nil {
		err = cerr
	}
	return took, err
}

// runFeeds runs j's feeds in s, in order, each answer checked.
func runFeeds(ctx context.Context, j Job, s FeedSession) error {
	for _, f := range j.Feeds {
		if err := s.Feed(ctx, f); err != nil {
			return err
		}
	}
	return nil
}
