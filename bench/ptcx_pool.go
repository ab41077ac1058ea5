package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/ptcx/ptcx/wasmhost"
)

// poolFillBound bounds how long a warm pool of Params.Live instances may
// take to fill before the sample fails (restoring one takes about 100 µs).
const poolFillBound = time.Minute

// pooledMemory measures a PoolMemory job: for each sample a new Runtime of
// the executor's engine and limits with a warm pool of j.Live instances;
// the resident memory read once it is started, then the job's program run
// once (a run's first take is what starts a pool filling; its answer is
// checked), the pool waited for until j.Live instances are idle, and the
// memory read again after GC. A sample is the growth over the idle
// instances (the one run's own residue is in it too, a few KiB in all).
func (b *PTCX) pooledMemory(ctx context.Context, j Job) (Raw, error) {
	if _, err := residentBytes(); err != nil {
		return Raw{}, err
	}
	raw := Raw{Samples: make([]float64, j.Samples)}
	for s := range j.Samples {
		sample, note, err := b.poolSample(ctx, j)
		if err != nil {
			return Raw{}, err
		}
		raw.Samples[s], raw.Note = sample, note
	}
	return raw, nil
}

// poolSample is one sample of pooledMemory: bytes per idle instance, and
// what the pool held.
func (b *PTCX) poolSample(ctx context.Context, j Job) (float64, string, error) {
	rt, err := wasmhost.New(ctx, b.cfg.WithPool(j.Live))
	if err != nil {
		return 0, "", fmt.Errorf("bench: a Runtime with a pool of %d: %w", j.Live, err)
	}
	defer func() { _ = rt.Close(context.WithoutCancel(ctx)) }()
	before, err := residentBytes()
	if err != nil {
		return 0, "", err
	}
	p := j.Warmup()
	out, err := rt.Run(ctx, wasmhost.Program{JS: p.JS, Tools: j.Tools}, echoDispatcher(nil))
	if err != nil {
		return 0, "", fmt.Errorf("bench: the run that starts the pool: %w", err)
	}
	if err := CheckAnswer(p, out.Result); err != nil {
		return 0, "", err
	}
	if err := waitPool(ctx, rt, j.Live, poolFillBound); err != nil {
		return 0, "", err
	}
	after, err := residentBytes()
	if err != nil {
		return 0, "", err
	}
	stats := rt.PoolStats()
	note := fmt.Sprintf("a pool of %d: %d idle, %d spare reservations, %d restored, %d recycled", stats.Size, stats.Idle,
		stats.Spares, stats.Restores, stats.Recycled)
	return float64(after-before) / float64(stats.Idle), note, nil
}

// waitPool waits until rt's pool holds want idle instances, at most bound.
func waitPool(ctx context.Context, rt *wasmhost.Runtime, want int, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for {
		s := rt.PoolStats()
		switch {
		case s.Idle >= want:
			return nil
		case s.LastError != nil:
			return fmt.Errorf("bench: the warm pool failed to fill (%d of %d idle): %w", s.Idle, want, s.LastError)
		case !time.Now().Before(deadline):
			return fmt.Errorf("bench: the warm pool held %d of %d idle instances after %s (%+v): lower --live", s.Idle, want, bound, s)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
