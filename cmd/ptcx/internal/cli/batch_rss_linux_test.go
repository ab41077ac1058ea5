package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rssItemsEnv sets how many items TestBatch_flatRSS runs: default
// defaultRSSItems; scripts/soak.sh (make soak) runs 100,000.
const rssItemsEnv = "PTCX_BATCH_RSS_ITEMS"

const (
	defaultRSSItems = 5000
	// rssGrowthBound is how much more the batch's process may hold in its
	// last third than in its first: input and output are streamed, and
	// what grows with the batch (the set of ids, for duplicates and
	// --resume) is a few dozen bytes per item, 5 MB at 100,000.
	rssGrowthBound = 32 << 20
	rssSampleEvery = 50 * time.Millisecond
	// rssBatchTimeout bounds the batch: far above its normal time on a
	// loaded machine (5,000 items take seconds; 100,000 a few minutes).
	rssBatchTimeout = 30 * time.Minute
)

// writeRSSItems writes n varied items (console output, random numbers,
// results of a few sizes) to a file, streamed.
func writeRSSItems(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "items.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	for i := range n {
		code := fmt.Sprintf(`console.log("item %d"); return {i: %d, r: Math.random(), pad: "x".repeat(%d)}`, i, i, i%7*100)
		_, err := fmt.Fprintln(w, item(fmt.Sprintf("item-%06d", i), code, fmt.Sprintf(`"seed":%d`, i)))
		require.NoError(t, err)
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
	return path
}

// rss is the resident set of process pid, in bytes.
func rss(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(v)), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no VmRSS", pid)
}

// A long batch's memory stays flat: its RSS, sampled while it runs, is no
// higher in the last third of the run than in the first third, give or take
// rssGrowthBound. The batch's rate is logged beside the executor's raw
// runs/s, measured in the same test.
func TestBatch_flatRSS(t *testing.T) {
	n := defaultRSSItems
	if s := os.Getenv(rssItemsEnv); s != "" {
		v, err := strconv.Atoi(s)
		require.NoError(t, err, "%s=%q: want a number of items", rssItemsEnv, s)
		require.Positive(t, v, "%s: want at least one item", rssItemsEnv)
		n = v
	}
	items := writeRSSItems(t, n)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	workers := runtime.NumCPU()
	cmd := child(t, "batch", "--no-builtin", "--parallel", strconv.Itoa(workers), "--out", out, items)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	began := time.Now()
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	type sample struct {
		at  time.Duration
		rss int64
	}
	var samples []sample
	tick := time.NewTicker(rssSampleEvery)
	defer tick.Stop()
	deadline := time.After(rssBatchTimeout)
	var err error
wait:
	for {
		select {
		case err = <-exited:
			break wait
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("the batch of %d items did not finish within %v", n, rssBatchTimeout)
		case <-tick.C:
			if v, rerr := rss(cmd.Process.Pid); rerr == nil { // the process may have just exited
				samples = append(samples, sample{time.Since(began), v})
			}
		}
	}
	took := time.Since(began)
	require.NoError(t, err, "%s", stderr.String())
	require.Contains(t, stderr.String(), fmt.Sprintf("%d runs", n))
	require.GreaterOrEqual(t, len(samples), 6, "too few RSS samples to compare the start with the end")

	third := took / 3
	var first, last int64
	for _, s := range samples {
		switch {
		case s.at < third:
			first = max(first, s.rss)
		case s.at >= 2*third:
			last = max(last, s.rss)
		}
	}
	batchRate := float64(n) / took.Seconds()
	rawN := min(n, 1000)
	rawBegan := time.Now()
	rawRuns(t, rawN, workers)
	rawRate := float64(rawN) / time.Since(rawBegan).Seconds()
	t.Logf("%d items in %v: peak RSS %d MiB in the first third, %d MiB in the last (%d samples); batch %.0f runs/s, executor %.0f runs/s (%d runs, same test), ratio %.2f",
		n, took.Round(time.Millisecond), first>>20, last>>20, len(samples), batchRate, rawRate, rawN, batchRate/rawRate)
	require.Positive(t, first)
	require.LessOrEqual(t, last, first+rssGrowthBound, "RSS grew by %d MiB over the batch: memory grows with the batch's length", (last-first)>>20)
}
