package wasmhost

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/runners"
)

// goid is the current goroutine's id, from its stack's first line.
func goid() int {
	var buf [64]byte
	b := bytes.TrimPrefix(buf[:runtime.Stack(buf[:], false)], []byte("goroutine "))
	n, _ := strconv.Atoi(string(b[:bytes.IndexByte(b, ' ')]))
	return n
}

// waitGoroutines waits until at most n goroutines run, for at most
// within (internal/testkit's, which this package's own tests cannot import).
func waitGoroutines(t *testing.T, n int, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); runtime.NumGoroutine() > n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines left behind: want at most %d, have %d\n%s", n, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
	}
}

// waitFor polls cond every millisecond for at most 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 5*time.Second, time.Millisecond, what)
}

// Runs one after another execute on one runner, and the runners leave when
// the Runtime closes.
func TestRuntime_Run_reusesItsRunner(t *testing.T) {
	runtime.GC()
	before := runtime.NumGoroutine()
	rt, err := New(context.Background(), NewConfig().WithPool(0))
	require.NoError(t, err)
	rt.runners = runners.New(rt.closing.Done(), runners.MaxIdle, time.Hour)
	p := Program{JS: `return 1`}
	run := func() {
		out, err := rt.Run(context.Background(), p, okTools)
		require.NoError(t, err)
		require.Equal(t, "1", string(out.Result))
	}
	run()
	waitFor(t, "the run's runner waits", func() bool { return rt.runners.Waiting() == 1 })
	n := runtime.NumGoroutine()
	for range 20 {
		run()
		waitFor(t, "the run's runner waits", func() bool { return rt.runners.Waiting() == 1 })
	}
	// A run started just before its runner receives starts another one,
	// so the runners may be up to max; never more.
	require.LessOrEqual(t, runtime.NumGoroutine(), n+runners.MaxIdle, "20 runs later, no more goroutines than waiting runners")
	require.LessOrEqual(t, rt.runners.Waiting(), runners.MaxIdle)
	require.NoError(t, rt.Close(context.Background()))
	waitFor(t, "no runner waits once closed", func() bool { return rt.runners.Waiting() == 0 })
	waitGoroutines(t, before, 5*time.Second)
}
