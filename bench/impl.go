package bench

import (
	"context"
	"errors"
	"fmt"
)

// Impl is one implementation measured: ptcx or a peer. Measure runs a job
// and checks every answer; a wrong answer is an error. It is called for
// one job at a time.
type Impl interface {
	Name() string
	Measure(ctx context.Context, j Job) (Raw, error)
}

// ErrMissing is matched (errors.Is) by an implementation's error when it
// cannot run here at all (no Node, no npm packages): the result says
// "missing" and why, and the implementation is never dropped silently.
var ErrMissing = errors.New("missing")

// ErrUnsupported is matched (errors.Is) by an implementation's error when
// it runs here but cannot measure a kind of workload at all (goja cannot
// snapshot a run, a fresh Worker per run has no pool): the result is
// missing, its note "missing: unsupported: why", and ptcx bench
// --require-peers does not count it as a peer missing. It matches
// ErrMissing too.
var ErrUnsupported = fmt.Errorf("%w: unsupported", ErrMissing)

// Missing is an implementation that cannot run here; every job gives
// reason, matching ErrMissing.
func Missing(name, reason string) Impl { return missing{name, reason} }

type missing struct{ name, reason string }

func (m missing) Name() string { return m.name }
func (m missing) Measure(context.Context, Job) (Raw, error) {
	return Raw{}, fmt.Errorf("%w: %s", ErrMissing, m.reason)
}
