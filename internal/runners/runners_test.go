package runners

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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

// A job started while a runner waits runs on that runner's goroutine, not
// on a new one. (A runner counts itself as waiting just before it
// receives, so a job started in between starts a new runner: the test
// starts jobs until one lands on a goroutine that ran a job before, which
// never happens when runners do not wait.)
func TestRunners_start_reusesAWaitingRunner(t *testing.T) {
	closing := make(chan struct{})
	defer close(closing)
	rs := New(closing, 2, time.Hour)
	ids := make(chan int, 1)
	job := Func(func() { ids <- goid() })
	seen := map[int]bool{}
	for attempt := 0; attempt < 100; attempt++ {
		rs.Start(job)
		id := <-ids
		require.NotEqual(t, goid(), id, "on a goroutine of its own, not the caller's")
		if seen[id] {
			return
		}
		seen[id] = true
		waitFor(t, "a runner waits for the next job", func() bool { return rs.Waiting() >= 1 })
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("100 jobs ran on %d goroutines, none on one that ran a job before", len(seen))
}

// At most max runners wait; the others exit when their job ends.
func TestRunners_serve_atMostMaxWait(t *testing.T) {
	for _, max := range []int{0, 1, 3} {
		t.Run(strconv.Itoa(max), func(t *testing.T) {
			runtime.GC()
			before := runtime.NumGoroutine()
			closing := make(chan struct{})
			rs := New(closing, max, time.Hour)
			release := make(chan struct{})
			var started sync.WaitGroup
			const jobs = 5
			started.Add(jobs)
			for range jobs {
				rs.Start(Func(func() { started.Done(); <-release }))
			}
			started.Wait()
			require.Zero(t, rs.Waiting(), "all busy")
			close(release)
			waitFor(t, "max runners wait", func() bool { return rs.Waiting() == max })
			waitGoroutines(t, before+max, 5*time.Second)
			time.Sleep(20 * time.Millisecond)
			require.Equal(t, max, rs.Waiting(), "no more than max wait, however many jobs ended")
			close(closing)
			waitFor(t, "none waits once closing", func() bool { return rs.Waiting() == 0 })
			waitGoroutines(t, before, 5*time.Second)
		})
	}
}

// A runner that waited idleFor for a job exits.
func TestRunners_serve_exitsWhenIdle(t *testing.T) {
	runtime.GC()
	before := runtime.NumGoroutine()
	closing := make(chan struct{})
	defer close(closing)
	rs := New(closing, 4, 20*time.Millisecond)
	done := make(chan struct{})
	rs.Start(Func(func() { close(done) }))
	<-done
	waitFor(t, "the idle runner exits", func() bool { return rs.Waiting() == 0 })
	waitGoroutines(t, before, 5*time.Second)
	// And a job started afterwards still runs, on a new runner.
	again := make(chan struct{})
	rs.Start(Func(func() { close(again) }))
	select {
	case <-again:
	case <-time.After(5 * time.Second):
		t.Fatal("a job started after the runners exited did not run")
	}
}

// Every job started, from many goroutines at once, runs exactly once.
func TestRunners_start_hammer(t *testing.T) {
	runtime.GC()
	before := runtime.NumGoroutine()
	closing := make(chan struct{})
	rs := New(closing, 4, time.Hour)
	const callers, each = 8, 300
	var ran atomic.Int64
	var wg sync.WaitGroup
	wg.Add(callers * each)
	for range callers {
		go func() {
			for range each {
				rs.Start(Func(func() { ran.Add(1); wg.Done() }))
			}
		}()
	}
	wg.Wait()
	require.Equal(t, int64(callers*each), ran.Load())
	waitFor(t, "at most max wait", func() bool { return rs.Waiting() <= 4 })
	close(closing)
	waitFor(t, "none waits once closing", func() bool { return rs.Waiting() == 0 })
	waitGoroutines(t, before, 5*time.Second)
}

// Started counts the runners started, not the jobs: a job that finds a
// runner waiting starts none.
func TestRunners_started(t *testing.T) {
	closing := make(chan struct{})
	rs := New(closing, 2, time.Hour)
	require.Zero(t, rs.Started())
	done := make(chan struct{})
	rs.Start(Func(func() { done <- struct{}{} }))
	<-done
	require.Equal(t, 1, rs.Started())
	waitFor(t, "the runner waits", func() bool { return rs.Waiting() == 1 })
	rs.Start(Func(func() { done <- struct{}{} }))
	<-done
	require.Equal(t, 1, rs.Started(), "the waiting runner took the second job")
	close(closing)
	waitFor(t, "the runner left", func() bool { return rs.Waiting() == 0 })
}
