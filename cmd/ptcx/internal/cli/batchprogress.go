package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// batchProgress shows a batch's progress on stderr: a progress bar on a
// terminal, a plain line every interval otherwise.
type batchProgress struct {
	w     io.Writer
	bar   *progressbar.ProgressBar
	total int64 // runs; 0 when unknown (stdin)
	start time.Time

	mu                       sync.Mutex
	nDone, nFailed, nSkipped int64

	stop    chan struct{}
	stopped sync.WaitGroup
}

func newBatchProgress(w io.Writer, total int64, every time.Duration) *batchProgress {
	p := &batchProgress{w: w, total: total, start: time.Now(), stop: make(chan struct{})}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		max := total
		if max == 0 {
			max = -1 // a spinner
		}
		p.bar = progressbar.NewOptions64(max, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("batch"),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("runs"),
			progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())
		return p
	}
	p.stopped.Add(1)
	go func() {
		defer p.stopped.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				fmt.Fprintln(p.w, p.line())
			case <-p.stop:
				return
			}
		}
	}()
	return p
}

func (p *batchProgress) line() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := time.Since(p.start)
	rate := float64(p.nDone) / max(elapsed.Seconds(), 1e-9)
	s := fmt.Sprintf("ptcx batch: %d", p.nDone)
	if p.total > 0 {
		s += fmt.Sprintf("/%d", p.total-p.nSkipped)
	}
	s += fmt.Sprintf(" runs done, %d failed, %.1f runs/s", p.nFailed, rate)
	if left := p.total - p.nSkipped - p.nDone; p.total > 0 && rate > 0 && left > 0 {
		s += fmt.Sprintf(", ETA %v", time.Duration(float64(left)/rate*float64(time.Second)).Round(time.Second))
	}
	return s
}

// done counts a finished run.
func (p *batchProgress) done(failed bool) {
	p.mu.Lock()
	p.nDone++
	if failed {
		p.nFailed++
	}
	f := p.nFailed
	p.mu.Unlock()
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("batch (%d failed)", f))
		_ = p.bar.Add(1)
	}
}

// skipped counts a run --resume found done.
func (p *batchProgress) skipped() {
	p.mu.Lock()
	p.nSkipped++
	p.mu.Unlock()
	if p.bar != nil && p.total > 0 {
		p.bar.ChangeMax64(p.total - p.nSkipped)
	}
}

// finish stops the progress display and writes the last line.
func (p *batchProgress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		return
	}
	close(p.stop)
	p.stopped.Wait()
	p.mu.Lock()
	p.total = p.nDone + p.nSkipped // the count of lines was an estimate: malformed lines run nothing
	p.mu.Unlock()
	fmt.Fprintln(p.w, p.line())
}
