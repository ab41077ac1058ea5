package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
)

// LoadEnv, set to 1, makes the load test run its long form: 1,000
// executions, all in flight at once.
const LoadEnv = "PTCX_SERVE_LOAD"

// loadKind is one kind of program in the mix, and the outcome it must have.
type loadKind struct {
	name   string
	req    serve.ExecutionRequest
	status string
	client bool // answers a client-side call
}

var loadMix = []loadKind{
	{"fast", serve.ExecutionRequest{Code: `return 1 + 1`}, serve.StatusCompleted, false},
	{"slow tool", serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 50)); const l = await tools.list({}); return l.entries.length`}, serve.StatusCompleted, false},
	{"client tool", serve.ExecutionRequest{Code: `return await tools.ask({q: "x"})`, ClientTools: []serve.ClientTool{askTool}}, serve.StatusCompleted, true},
	{"failing", serve.ExecutionRequest{Code: `throw new Error("planned")`}, serve.StatusFailed, false},
	{"hostile", serve.ExecutionRequest{Code: `for (;;) {}`, Limits: &serve.RunLimits{TimeoutMS: 100}}, serve.StatusFailed, false},
}

// runOne runs one execution to settlement with client.Run (answering its
// client calls, retrying what the server says to retry after 20 ms) and
// returns its latency.
func runOne(ctx context.Context, c *client.Client, k loadKind) (time.Duration, error) {
	start := time.Now()
	// The load oversubscribes the tenant's quotas on purpose: refusals are
	// retried until ctx ends, not within the client's default bounds.
	st, err := c.Run(ctx, k.req, client.RunOptions{Answer: answerEach, RetryWait: 20 * time.Millisecond, MaxRetries: math.MaxInt32, MaxElapsed: time.Hour})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", k.name, err)
	}
	if st.Status != k.status {
		return 0, fmt.Errorf("%s: status %s, want %s (%+v)", k.name, st.Status, k.status, st.Error)
	}
	return time.Since(start), nil
}

// answerEach answers every pending client call with "answer".
func answerEach(_ context.Context, pending []serve.PendingCall) ([]serve.ToolResult, error) {
	rs := make([]serve.ToolResult, 0, len(pending))
	for _, p := range pending {
		rs = append(rs, serve.ToolResult{ID: p.ID, OK: true, Value: json.RawMessage(`"answer"`)})
	}
	return rs, nil
}

func quantiles(ds []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(ds)
	if len(ds) == 0 {
		return 0, 0
	}
	return ds[len(ds)/2], ds[min(len(ds)*99/100, len(ds)-1)]
}

// drive runs n executions of tenant key's mix, at most conc at once, and
// returns every latency; any lost or wrong result fails the test.
func drive(t testing.TB, ctx context.Context, c *client.Client, n, conc int, mix []loadKind) []time.Duration {
	t.Helper()
	var (
		mu   sync.Mutex
		lat  []time.Duration
		errs []error
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, conc)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			d, err := runOne(ctx, c, mix[i%len(mix)])
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			lat = append(lat, d)
		}()
	}
	wg.Wait()
	require.Empty(t, errs, "lost or wrong results")
	require.Len(t, lat, n, "every execution settled: 0 lost results")
	return lat
}

// TestServer_load runs a mixed load on loopback (200 executions, 32 at a
// time; with PTCX_SERVE_LOAD=1, 1,000 all at once), requires every result
// to arrive with the right outcome, reports p50/p99 and throughput, then
// the noisy-neighbour check: tenant b's latency alone and while tenant a
// floods CPU-bound programs (reported, not asserted: on a shared machine
// the ratio is noise; TestServer_noisyNeighbourTakesTurns asserts the
// fair order of the guest slot that bounds it).
// Goroutines return to their baseline afterwards.
func TestServer_load(t *testing.T) {
	n, conc := 200, 32
	if os.Getenv(LoadEnv) == "1" {
		n, conc = 1000, 1000
	}
	testkit.RequireGuest(t)
	baseline, fds, rss := runtime.NumGoroutine(), openFDs(), residentBytes()
	t.Run("mix", func(t *testing.T) { // a subtest: its server is closed before the goroutines are counted
		ts := newServer(t, func(c *serve.Config) {
			c.Tenants[0].Quotas = serve.Quotas{MaxConcurrent: conc, MaxPending: conc}
			c.Tenants[1].Quotas = serve.Quotas{MaxConcurrent: 8, MaxPending: 8}
		})
		lctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
		defer hc.CloseIdleConnections()
		a, b := client.New(ts.url, keyA, hc), client.New(ts.url, keyB, hc)

		start := time.Now()
		lat := drive(t, lctx, a, n, conc, loadMix)
		elapsed := time.Since(start)
		p50, p99 := quantiles(lat)
		t.Logf("mixed load: %d executions, %d at a time, in %v: %.0f/s, p50 %v, p99 %v", n, conc, elapsed.Round(time.Millisecond),
			float64(n)/elapsed.Seconds(), p50.Round(time.Microsecond), p99.Round(time.Microsecond))

		fast := loadMix[:1]
		_, aloneP99 := quantiles(drive(t, lctx, b, 50, 4, fast))
		floodCtx, stopFlood := context.WithCancel(lctx)
		var flood sync.WaitGroup
		cpu := loadKind{"cpu", serve.ExecutionRequest{Code: `let x = 0; for (let i = 0; i < 3e6; i++) { x += i % 7 } return x`}, serve.StatusCompleted, false}
		for range 8 {
			flood.Add(1)
			go func() {
				defer flood.Done()
				for floodCtx.Err() == nil {
					_, _ = runOne(floodCtx, a, cpu)
				}
			}()
		}
		_, noisyP99 := quantiles(drive(t, lctx, b, 50, 4, fast))
		stopFlood()
		flood.Wait()
		t.Logf("noisy neighbour: tenant b's p99 alone %v, while tenant a floods CPU-bound programs %v (%.1fx; the goal is within 2x)",
			aloneP99.Round(time.Microsecond), noisyP99.Round(time.Microsecond), float64(noisyP99)/float64(max(aloneP99, 1)))
	})
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	testkit.WaitGoroutines(t, baseline, 30*time.Second)
	afterFDs, afterRSS := openFDs(), residentBytes()
	t.Logf("after the load: goroutines %d (baseline %d), open fds %d (baseline %d), resident %d MiB (baseline %d MiB; -1 where /proc is missing)",
		runtime.NumGoroutine(), baseline, afterFDs, fds, afterRSS>>20, rss>>20)
	if fds >= 0 {
		// The shared sandbox's pool and the client's idle connections may
		// hold a few more than before; a leak per execution holds hundreds.
		require.LessOrEqual(t, afterFDs, fds+16, "open fds back to their baseline")
	}
	// Resident memory is reported, not asserted here: under -race the
	// detector's shadow memory is never given back, and the shared sandbox
	// compiles the guest and fills its pool during the load, so the
	// baseline is not comparable. cmd/ptcx's
	// TestServe_residentMemoryAfterLoad bounds it on a `ptcx serve` process.
}

// residentBytes is the process's resident memory after a collection that
// returns what it can to the OS (Linux), -1 elsewhere.
func residentBytes() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return -1
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(b), &size, &resident); err != nil {
		return -1
	}
	return resident * int64(os.Getpagesize())
}

// openFDs counts the process's open file descriptors (Linux), -1 elsewhere.
func openFDs() int {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(es)
}
