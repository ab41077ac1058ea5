package bench

import "context"

// serveE2E measures serve_e2e: each sample one execution of the job's
// program over loopback HTTP (POST /v1/executions, which answers once it
// settles), on a keep-alive connection, after one warm-up (ns).
func (b *PTCX) serveE2E(ctx context.Context, j Job) (Raw, error) {
	s, err := b.ensureServe(ctx)
	if err != nil {
		return Raw{}, err
	}
	return latency(ctx, j, func(ctx context.Context, p Program) error { return s.execute(ctx, p, nil) })
}
