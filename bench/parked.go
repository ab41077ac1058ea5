package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptcx/ptcx/serve"
)

// parked measures parked_10k and parked_10k_dir: j.Parked executions of
// one tenant, each parked on one call of the client tool "ask", in one
// serve of their own (quotas raised for them: serveConfig), on its spill
// directory or on a dir: store (j.Store). It posts them 8 at a time and
// times parking them all, then reads the growth of the process's
// proportional resident memory with all of them parked and the bytes
// their snapshots take on disk, then answers them one at a time, timing
// each answer until its execution settled (a resume, the program's end,
// the answer checked): those times are the samples (ns). Memory and disk
// are read once the park grace has passed for the last of them. Raw.Extra has
// rss_mib, parked_mib, park_all_s and resume_p99_ms.
func (b *PTCX) parked(ctx context.Context, j Job) (Raw, error) {
	if b.name != ImplPTCX {
		return Raw{}, fmt.Errorf("%w: the parked workloads run on ptcx (wazero) alone: what they measure is the service's, "+
			"and %d executions per store is long enough once", ErrUnsupported, j.Parked)
	}
	if j.Parked < 1 {
		return Raw{}, fmt.Errorf("bench: a parked job of %d executions", j.Parked)
	}
	tmp, err := os.MkdirTemp("", "ptcx-bench-parked-")
	if err != nil {
		return Raw{}, err
	}
	cfg := serveConfig(tmp, j.Parked)
	disk := cfg.SpillDir
	switch j.Store {
	case "spill":
	case "dir":
		disk = filepath.Join(tmp, "store")
		cfg.Store = &serve.StoreConfig{Kind: "dir", Path: disk}
	default:
		_ = os.RemoveAll(tmp)
		return Raw{}, fmt.Errorf("bench: a parked job's store %q: want spill or dir", j.Store)
	}
	const posters = 8
	s, err := startServe(ctx, b.cfg, cfg, tmp, posters)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return Raw{}, err
	}
	defer func() { _ = s.stop(ctx) }()
	p := j.Warmup()
	tools := []serve.ClientTool{askTool}
	if err := s.execute(ctx, p, tools); err != nil { // warm-up: one parked and answered
		return Raw{}, err
	}
	before, err := residentBytes()
	if err != nil {
		return Raw{}, err
	}

	pending := make([]*serve.ExecutionState, j.Parked)
	var next atomic.Int64
	errs := make([]error, posters)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range posters {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(j.Parked); i = next.Add(1) - 1 {
				st, err := s.c.Execute(ctx, serve.ExecutionRequest{Code: p.TS, ClientTools: tools})
				if err == nil && (st.Status != serve.StatusPending || len(st.Pending) != 1) {
					err = fmt.Errorf("execution %s is %s with %d pending calls, not parked on one", st.ID, st.Status, len(st.Pending))
				}
				if err != nil {
					errs[w] = fmt.Errorf("bench: parking execution %d: %w", i, err)
					return
				}
				pending[i] = st
			}
		})
	}
	wg.Wait()
	parkAll := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return Raw{}, err
	}
	// The last parked are held in memory for the park grace before their
	// bytes are written (server.park_grace_ms): wait until the files on
	// disk stop changing (within a bound).
	if err := settleDisk(ctx, disk); err != nil {
		return Raw{}, err
	}
	after, err := residentBytes()
	if err != nil {
		return Raw{}, err
	}
	onDisk, files, err := dirBytes(disk)
	if err != nil {
		return Raw{}, err
	}

	raw := Raw{Samples: make([]float64, 0, j.Parked)}
	for _, st := range pending {
		results, err := answerAsk(ctx, st.Pending)
		if err != nil {
			return Raw{}, err
		}
		t0 := time.Now()
		done, err := s.c.ToolResults(ctx, st.ID, results...)
		for err == nil && done.Status == serve.StatusRunning {
			done, err = s.c.Get(ctx, st.ID, true)
		}
		took := time.Since(t0)
		if err != nil {
			return Raw{}, fmt.Errorf("bench: answering execution %s: %w", st.ID, err)
		}
		if err := checkState(p, done); err != nil {
			return Raw{}, err
		}
		raw.Samples = append(raw.Samples, float64(took.Nanoseconds()))
	}
	sortedResumes := slices.Clone(raw.Samples)
	slices.Sort(sortedResumes)
	raw.Extra = map[string]float64{
		"rss_mib":       float64(after-before) / (1 << 20),
		"parked_mib":    float64(onDisk) / (1 << 20),
		"park_all_s":    parkAll.Seconds(),
		"resume_p99_ms": quantile(sortedResumes, 0.99) / 1e6,
	}
	raw.Note = fmt.Sprintf("%d parked (%s): resident memory grew %.1f MiB (Pss) with all parked, %.1f MiB in %d files on disk, "+
		"parked in %.2f s (8 clients at once), resumed one at a time: p50 %.3f ms, p99 %.3f ms",
		j.Parked, j.Store, raw.Extra["rss_mib"], raw.Extra["parked_mib"], files, raw.Extra["park_all_s"],
		quantile(sortedResumes, 0.5)/1e6, raw.Extra["resume_p99_ms"])
	return raw, nil
}

// settleDisk waits, at most 30 s, until the files under dir have stopped
// changing for 5 polls 20 ms apart, the first poll past twice the default
// park grace.
func settleDisk(ctx context.Context, dir string) error {
	time.Sleep(2 * serve.DefaultParkGrace)
	deadline := time.Now().Add(30 * time.Second)
	lastN, lastFiles, same := int64(-1), -1, 0
	for same < 5 && time.Now().Before(deadline) {
		n, files, err := dirBytes(dir)
		if err != nil {
			return err
		}
		if n == lastN && files == lastFiles {
			same++
		} else {
			lastN, lastFiles, same = n, files, 0
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// dirBytes is the size and count of the regular files under dir (0 when
// it does not exist).
func dirBytes(dir string) (n int64, files int, err error) {
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil // renamed or removed as it was read: a file being written
			}
			if err != nil {
				return err
			}
			n += info.Size()
			files++
		}
		return nil
	})
	return n, files, err
}
