//go:build linux

package hostile_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

// soakEnv sets how long TestSoak runs (a Go duration, e.g. "3m"; default
// soakDefault). scripts/soak.sh runs it for 3 minutes.
const (
	soakEnv     = "PTCX_SOAK"
	soakDefault = 15 * time.Second
)

// soakProgram is one program of the soak's mix and the outcome it must
// have, every time.
type soakProgram struct {
	name, code string
	limits     map[string]any
	want       string // an outcome (see outcome)
	result     string // for OK: the result's JSON
}

var soakMix = []soakProgram{
	{name: "arithmetic", code: `return 1 + 1`, want: "OK", result: `2`},
	{name: "nested calls", code: `const [g, r] = await Promise.all([tools.glob({pattern: "*.txt"}), tools.read({path: "a.txt"})]);
		return [g.matches.length, r.content]`, want: "OK", result: `[1, "hello\n"]`},
	{name: "bash", code: `return (await tools.bash({command: "echo hi"})).stdout`, want: "OK", result: `"hi\n"`},
	{name: "filter", code: `return Array.from({length: 1000}, (_, i) => i).filter((i) => i % 7 === 0).length`, want: "OK", result: `143`},
	{name: "infinite loop", code: `while (true) {}`, limits: map[string]any{"timeout_ms": 200}, want: "CODE_RUN_FAILED/timeout"},
	{name: "native loop", code: `return String(7n ** 300000n).length`, limits: map[string]any{"timeout_ms": 100}, want: "CODE_RUN_FAILED/timeout"},
	{name: "memory bomb", code: `const a: ArrayBuffer[] = []; while (true) a.push(new ArrayBuffer(1 << 20));`,
		limits: map[string]any{"memory_mb": 32}, want: "CODE_RUN_FAILED/memory"},
	{name: "microtask flood", code: `function f() { queueMicrotask(f) } f(); await new Promise(() => {})`,
		limits: map[string]any{"timeout_ms": 200}, want: "CODE_RUN_FAILED/timeout"},
	{name: "deep recursion", code: `function f(n: number): number { return f(n + 1) + 1 } return f(0)`, want: "CODE_RUN_FAILED/exception"},
	{name: "syntax error", code: `const x = ;`, want: "CODE_RUN_FAILED/syntax"},
	{name: "output flood", code: `for (;;) console.log("spam ".repeat(100))`, want: "CODE_RUN_FAILED/output-limit"},
	{name: "stuck tool past the wall time", code: `for (;;) await tools.sink({})`, limits: map[string]any{"wall_ms": 200}, want: "CODE_RUN_FAILED/timeout"},
	{name: "thrown error", code: `throw new Error("planned")`, want: "CODE_RUN_FAILED/exception"},
}

// resources is what the process holds.
type resources struct {
	goroutines, fds, threads int
	peakRSSMB                float64
}

func measure(t *testing.T) resources {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return resources{
		goroutines: runtime.NumGoroutine(),
		fds:        len(fds),
		threads:    statusField(t, "Threads"),
		peakRSSMB:  float64(statusField(t, "VmHWM")) / 1024,
	}
}

// statusField reads a number from /proc/self/status ("VmHWM" is in kB).
func statusField(t *testing.T, name string) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, err := strconv.Atoi(strings.Fields(v)[0])
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", name)
	return 0
}

// TestSoak runs the mix of good and hostile programs through one executor
// at twice GOMAXPROCS concurrency for PTCX_SOAK (default 15 s), then
// requires that every submission got its result with the right outcome,
// and that goroutines and file descriptors came back to their baseline and
// threads stayed bounded.
func TestSoak(t *testing.T) {
	if os.Getenv(caseEnv) != "" {
		t.Skip("a child runs TestHostileChild only")
	}
	d := soakDefault
	if v := os.Getenv(soakEnv); v != "" {
		var err error
		d, err = time.ParseDuration(v)
		require.NoError(t, err, "%s=%q is not a duration (e.g. 3m)", soakEnv, v)
	}
	e := newEnv(t, childLimits)
	require.NoError(t, e.file("a.txt", []byte("hello\n")))
	ctx := context.Background()
	for _, p := range soakMix { // warm up: the sandbox, the pools, bash
		requireOutcome(t, p, e.run(ctx, p.code, p.limits))
	}
	runtime.GC()
	before := measure(t)

	workers := 2 * runtime.GOMAXPROCS(0)
	var submitted, settled, wrong atomic.Int64
	var mu sync.Mutex
	var firstWrong []string
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; time.Now().Before(deadline); i += workers {
				p := soakMix[i%len(soakMix)]
				submitted.Add(1)
				r := e.run(ctx, p.code, p.limits)
				settled.Add(1)
				if why := misfit(p, r); why != "" {
					wrong.Add(1)
					mu.Lock()
					if len(firstWrong) < 5 {
						firstWrong = append(firstWrong, why)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)

	// Settle: what the runs started may take a moment to wind down.
	var after resources
	for settleBy := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		runtime.GC()
		after = measure(t)
		if (after.goroutines <= before.goroutines+2 && after.fds <= before.fds+2) || time.Now().After(settleBy) {
			break
		}
	}
	t.Logf("soak: %s at %d workers: %d runs, %.1f runs/s", elapsed.Round(time.Millisecond), workers, settled.Load(), float64(settled.Load())/elapsed.Seconds())
	t.Logf("soak: goroutines %d -> %d, fds %d -> %d, threads %d -> %d, peak RSS %.0f -> %.0f MB",
		before.goroutines, after.goroutines, before.fds, after.fds, before.threads, after.threads, before.peakRSSMB, after.peakRSSMB)

	require.Equal(t, submitted.Load(), settled.Load(), "every submission got a result")
	require.Zero(t, wrong.Load(), "runs with the wrong outcome; the first: %v", firstWrong)
	require.LessOrEqual(t, after.goroutines, before.goroutines+2, "goroutines back to the baseline")
	require.LessOrEqual(t, after.fds, before.fds+2, "file descriptors back to the baseline")
	require.LessOrEqual(t, after.threads, before.threads+4*workers+16, "OS threads bounded")
}

// misfit says how r is not the outcome p must have, or "".
func misfit(p soakProgram, r api.Result) string {
	if o := outcome(r); o != p.want {
		return fmt.Sprintf("%s: %s, want %s: %s", p.name, o, p.want, firstLine(r.Text))
	}
	if p.want == "OK" && !jsonEqual(result(r), p.result) {
		return fmt.Sprintf("%s: result %s, want %s", p.name, result(r), p.result)
	}
	return ""
}

func requireOutcome(t *testing.T, p soakProgram, r api.Result) {
	t.Helper()
	require.Empty(t, misfit(p, r))
}
