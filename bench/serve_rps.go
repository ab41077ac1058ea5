package bench

import (
	"context"
	"fmt"
)

// serveRPS measures serve_rps: j.Batch executions of the job's program
// over loopback HTTP, j.Parallel at a time (Params.ServeParallel), per
// second, as runs_per_second counts runs in-process.
func (b *PTCX) serveRPS(ctx context.Context, j Job) (Raw, error) {
	s, err := b.ensureServe(ctx)
	if err != nil {
		return Raw{}, err
	}
	return throughput(ctx, j, func(ctx context.Context, p Program) error { return s.execute(ctx, p, nil) })
}

// InProcess is ImplPTCXInProcess: b's executor measured on a serve_rps job
// as runs_per_second measures it (the same runs, at the job's concurrency),
// the figure serve_rps is held to. It measures no other kind.
func (b *PTCX) InProcess() Impl { return inProcess{b} }

type inProcess struct{ b *PTCX }

func (inProcess) Name() string { return ImplPTCXInProcess }

func (i inProcess) Measure(ctx context.Context, j Job) (Raw, error) {
	if j.Kind != ServeThroughput {
		return Raw{}, fmt.Errorf("%w: %s measures only serve_rps's runs in-process", ErrUnsupported, ImplPTCXInProcess)
	}
	return throughput(ctx, j, i.b.run)
}
