package wasmhost

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestGate_fifo(t *testing.T) {
	g := newGate(2, 100)
	ctx := context.Background()
	require.NoError(t, g.acquire(ctx, time.Time{}, 60))
	require.NoError(t, g.acquire(ctx, time.Time{}, 40)) // at the byte budget
	require.False(t, g.tryAcquire(0), "at the count")

	// Waiters are admitted in order; a large head holds back small ones.
	order := make(chan int, 3)
	var wg sync.WaitGroup
	for i, bytes := range []int64{70, 10, 10} {
		wg.Go(func() {
			require.NoError(t, g.acquire(ctx, time.Time{}, bytes))
			order <- i
		})
		require.Eventually(t, func() bool { _, _, w := g.usage(); return w == i+1 }, 5*time.Second, time.Millisecond)
	}
	g.release(40) // 60 held: 70 does not fit, so nobody goes
	_, _, w := g.usage()
	require.Equal(t, 3, w)
	g.release(60) // 0 held: 70 then 10 fit (count 2)
	require.ElementsMatch(t, []int{0, 1}, []int{<-order, <-order})
	_, _, w = g.usage()
	require.Equal(t, 1, w)
	g.release(70)
	require.Equal(t, 2, <-order)
	wg.Wait()
	n, b, w := g.usage()
	require.Equal(t, []any{2, int64(20), 0}, []any{n, b, w})
}

func TestGate_waitEnds(t *testing.T) {
	g := newGate(1, 0)
	require.True(t, g.tryAcquire(0))

	start := time.Now()
	require.ErrorIs(t, g.acquire(context.Background(), time.Now().Add(20*time.Millisecond), 0), errGateTimeout)
	require.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)

	ctx, cancel := context.WithCancelCause(context.Background())
	cause := context.DeadlineExceeded
	time.AfterFunc(10*time.Millisecond, func() { cancel(cause) })
	require.ErrorIs(t, g.acquire(ctx, time.Time{}, 0), cause)

	n, _, w := g.usage()
	require.Equal(t, 1, n)
	require.Zero(t, w, "a waiter that gave up left the line")
	g.release(0)
	require.True(t, g.tryAcquire(0), "nothing was lost")
}

// A waiter admitted just as its wait ended passes its place on.
func TestGate_hammer(t *testing.T) {
	g := newGate(3, 0)
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%5)*time.Millisecond)
			defer cancel()
			if g.acquire(ctx, time.Time{}, 0) == nil {
				n, _, _ := g.usage()
				require.LessOrEqual(t, n, 3)
				time.Sleep(time.Millisecond)
				g.release(0)
			}
		})
	}
	wg.Wait()
	n, _, w := g.usage()
	require.Zero(t, n)
	require.Zero(t, w)
}

// The watchdog reads the CPU time of the guest's thread from another one:
// a thread that sleeps uses none, one that spins uses about its wall time.
func TestRun_cpuUsed(t *testing.T) {
	if !threadClocks {
		r := &run{}
		_, ok := r.cpuUsed()
		require.False(t, ok, "no thread clock: the watchdog judges in wall time")
		return
	}
	for _, spin := range []bool{false, true} {
		r := &run{}
		_, ok := r.cpuUsed()
		require.False(t, ok, "not started")
		// The spinner burns 150 ms of its thread's CPU time, however long
		// that takes on a loaded machine; the sleeper sleeps 300 ms.
		const burn = 150 * time.Millisecond
		started, spun, finish, stopped := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan int64)
		go func() {
			r.startCPU(0)
			close(started)
			if spin {
				for start := threadCPU(); threadCPU()-start < int64(burn); {
				}
			} else {
				time.Sleep(300 * time.Millisecond)
			}
			close(spun)
			<-finish
			stopped <- r.stopCPU()
		}()
		<-started
		<-spun
		got, ok := r.cpuUsed()
		require.True(t, ok)
		if spin {
			require.GreaterOrEqual(t, got, int64(burn))
		} else {
			require.Less(t, got, int64(50*time.Millisecond))
		}
		close(finish)
		require.GreaterOrEqual(t, <-stopped, got, "the export's charge includes what the watchdog saw")
		_, ok = r.cpuUsed()
		require.False(t, ok, "stopped")
	}
}
