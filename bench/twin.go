package bench

import (
	"context"
	"fmt"

	"github.com/ptcx/ptcx/api"
)

// Twin is ImplPTCXTwin: b measuring each job's twin (Job.Twin), in the
// job's round. A job without a twin is unsupported.
func (b *PTCX) Twin() Impl { return twin{b} }

type twin struct{ b *PTCX }

func (twin) Name() string { return ImplPTCXTwin }

func (t twin) Measure(ctx context.Context, j Job) (Raw, error) {
	if j.Twin == nil {
		return Raw{}, fmt.Errorf("%w: %s measures only a workload's twin, and %s has none", ErrUnsupported, ImplPTCXTwin, j.Workload)
	}
	raw, err := t.b.Measure(ctx, *j.Twin)
	if err == nil && raw.Note == "" {
		raw.Note = "ptcx on " + j.Twin.Workload + ", in " + j.Workload + "'s rounds"
	}
	return raw, err
}

// RunsLanguage is nil for every language: what the twin runs is the twin
// workload's (per_call_await's TypeScript beside a Python workload).
func (twin) RunsLanguage(api.Language) error { return nil }
