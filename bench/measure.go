package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptcx/ptcx/internal/meminfo"
)

// RunFunc runs one program to its end and checks its answer (CheckAnswer).
// It is called from several goroutines at once by LiveMemory and
// Throughput jobs.
type RunFunc func(ctx context.Context, p Program) error

// MeasureFunc measures j for an in-process implementation whose runs are
// run: the one way every Go implementation is timed. park is the
// implementation's wait tool.
func MeasureFunc(ctx context.Context, j Job, run RunFunc, park *Parking) (Raw, error) {
	switch j.Kind {
	case Latency:
		return latency(ctx, j, run)
	case PerCall:
		raw, err := latency(ctx, j, run)
		if err != nil {
			return raw, err
		}
		base, err := latency(ctx, Job{Samples: j.Samples, Programs: j.Base}, run)
		raw.Base = base.Samples
		return raw, err
	case LiveMemory:
		return liveMemory(ctx, j, run, park)
	case Throughput:
		return throughput(ctx, j, run)
	case Suspend, Resume, PoolMemory, Session, AfterSession:
		return Raw{}, fmt.Errorf("bench: a %s job is not measured by running programs: the implementation measures it itself, "+
			"or is missing for it", j.Kind)
	case ServeLatency, ServeThroughput, ServeClientTool, Parked:
		return Raw{}, fmt.Errorf("%w: a %s workload measures ptcx serve over HTTP, which this implementation has no counterpart of",
			ErrUnsupported, j.Kind)
	}
	return Raw{}, fmt.Errorf("bench: unknown kind %q", j.Kind)
}

// latency times each sample's run, after one warm-up run (ns).
func latency(ctx context.Context, j Job, run RunFunc) (Raw, error) {
	if err := run(ctx, j.Warmup()); err != nil {
		return Raw{}, err
	}
	raw := Raw{Samples: make([]float64, j.Samples)}
	for i := range j.Samples {
		p := j.Program(i)
		start := time.Now()
		err := run(ctx, p)
		raw.Samples[i] = float64(time.Since(start).Nanoseconds())
		if err != nil {
			return Raw{}, err
		}
	}
	return raw, nil
}

// throughput counts j.Batch runs of the job's program, j.Parallel at a
// time, per second.
func throughput(ctx context.Context, j Job, run RunFunc) (Raw, error) {
	if err := run(ctx, j.Warmup()); err != nil {
		return Raw{}, err
	}
	raw := Raw{Samples: make([]float64, j.Samples)}
	for s := range j.Samples {
		var next atomic.Int64
		errs := make([]error, j.Parallel)
		var wg sync.WaitGroup
		start := time.Now()
		for w := range j.Parallel {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < int64(j.Batch); i = next.Add(1) - 1 {
					if err := run(ctx, j.Warmup()); err != nil {
						errs[w] = err
						return
					}
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return Raw{}, err
		}
		raw.Samples[s] = float64(j.Batch) / time.Since(start).Seconds()
	}
	return raw, nil
}

// liveMemory parks j.Live runs on the wait tool at once and takes the
// growth of proportional resident memory per run (bytes, residentBytes),
// the Go heap returned to the OS before each reading.
func liveMemory(ctx context.Context, j Job, run RunFunc, park *Parking) (Raw, error) {
	if _, err := residentBytes(); err != nil {
		return Raw{}, err
	}
	raw := Raw{Samples: make([]float64, j.Samples), Note: residentNote}
	for s := range j.Samples {
		before, err := residentBytes()
		if err != nil {
			return Raw{}, err
		}
		parked, release := park.Arm(j.Live)
		errs := make(chan error, j.Live)
		var wg sync.WaitGroup
		for range j.Live {
			wg.Go(func() { errs <- run(ctx, j.Warmup()) })
		}
		var after int64
		select {
		case <-parked:
			after, err = residentBytes()
		case err = <-errs:
			if err == nil {
				err = errors.New("a run returned before the wait tool released it")
			}
		case <-ctx.Done():
			err = ctx.Err()
		}
		release()
		wg.Wait()
		close(errs)
		for e := range errs {
			err = errors.Join(err, e)
		}
		if err != nil {
			return Raw{}, err
		}
		raw.Samples[s] = float64(after-before) / float64(j.Live)
	}
	return raw, nil
}

// residentNote says in a live-memory result what was measured.
const residentNote = "proportional resident memory (Pss, /proc/self/smaps_rollup): a page shared by n mappings counts 1/n"

// residentBytes is the process's proportional resident memory (Pss, from
// /proc/self/smaps_rollup, Linux 4.14 on), after the free Go heap is
// returned to the OS: the pages the process has in memory, each shared
// page divided among the mappings that share it. Plain resident memory
// (statm's) counts a page once per mapping: a page of the image that 100
// restored instances have read counts 100 times there, for one page of
// memory. Where there is no smaps_rollup the workload is missing here.
func residentBytes() (int64, error) {
	debug.FreeOSMemory()
	n, err := meminfo.Pss()
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%w: proportional resident memory is read from %s (Linux 4.14 on), absent here",
			ErrMissing, meminfo.Rollup)
	}
	return n, err
}

// Parking is an implementation's wait tool: Arm before a live-memory
// sample's runs start, and every call to Wait blocks until release.
// Safe for concurrent use.
type Parking struct {
	mu      sync.Mutex
	want    int
	count   int
	parked  chan struct{}
	release chan struct{}
}

// Arm expects n calls of Wait: parked is closed when all n have come,
// release lets them return.
func (k *Parking) Arm(n int) (parked <-chan struct{}, release func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.want, k.count = n, 0
	k.parked, k.release = make(chan struct{}), make(chan struct{})
	ch := k.release
	return k.parked, sync.OnceFunc(func() { close(ch) })
}

// Wait counts the call and blocks until released or ctx ends. Called when
// not armed, it fails at once.
func (k *Parking) Wait(ctx context.Context) error {
	k.mu.Lock()
	release := k.release
	if release == nil {
		k.mu.Unlock()
		return errors.New("bench: the wait tool was called outside the live-memory workload")
	}
	k.count++
	if k.count == k.want {
		close(k.parked)
	}
	k.mu.Unlock()
	select {
	case <-release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
