package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/ptcx/ptcx/api"
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

// LanguageRunner is an Impl that says which languages it runs: RunsLanguage
// is nil for one it runs, else why not (matching ErrMissing when it could
// but cannot here, as ptcx in a build without the Python guest; otherwise
// it is taken as unsupported). An Impl that is not a LanguageRunner runs
// TypeScript only: goja, the Node peers, the native QuickJS builds.
type LanguageRunner interface {
	RunsLanguage(lang api.Language) error
}

// runsLanguage is nil when impl runs lang's programs, else an error
// matching ErrMissing (ErrUnsupported unless impl said ErrMissing alone).
func runsLanguage(impl Impl, lang api.Language) error {
	lang = lang.Canonical()
	var err error
	if r, ok := impl.(LanguageRunner); ok {
		err = r.RunsLanguage(lang)
	} else if lang != api.LanguageTypeScript {
		err = fmt.Errorf("%s runs TypeScript (JavaScript) programs only, not %s", impl.Name(), lang.Title())
	}
	if err == nil || errors.Is(err, ErrMissing) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnsupported, err)
}
