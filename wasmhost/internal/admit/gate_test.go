package admit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// queue starts a waiter of key for bytes on g and returns where it reports
// its admission; it returns once the waiter is in line.
func queue(t *testing.T, g *Gate, key string, bytes int64, name string, order chan<- string) {
	t.Helper()
	_, _, before := g.Usage()
	go func() {
		if err := g.Acquire(context.Background(), time.Time{}, key, bytes); err != nil {
			order <- "error: " + err.Error()
			return
		}
		order <- name
	}()
	require.Eventually(t, func() bool { _, _, w := g.Usage(); return w == before+1 }, 5*time.Second, time.Millisecond)
}

// admitted releases a place n times (of bytes each) and returns who was
// admitted, in order.
func admitted(t *testing.T, g *Gate, order <-chan string, n int) []string {
	t.Helper()
	var got []string
	for range n {
		g.Release(0)
		select {
		case name := <-order:
			got = append(got, name)
		case <-time.After(5 * time.Second):
			t.Fatalf("nobody was admitted after %v", got)
		}
	}
	return got
}

func TestGate_acquire_counts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		max   int
		held  int
		waits bool
		after int // places taken in the end
	}{
		{"below the count", 3, 1, false, 2},
		{"one below the count", 3, 2, false, 3},
		{"at the count", 3, 3, true, 3},
		{"one count, held", 1, 1, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := New(tc.max, 0)
			for range tc.held {
				require.NoError(t, g.Acquire(context.Background(), time.Time{}, "a", 0))
			}
			err := g.Acquire(context.Background(), time.Now().Add(50*time.Millisecond), "b", 0)
			if tc.waits {
				require.ErrorIs(t, err, ErrTimeout, "past the count a holder waits")
			} else {
				require.NoError(t, err)
			}
			n, _, w := g.Usage()
			require.Equal(t, tc.after, n)
			require.Zero(t, w, "nobody is left in line")
			require.Empty(t, g.lines)
			require.Empty(t, g.turns)
		})
	}
}

func TestGate_acquire_bytes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		held  int64
		want  int64
		waits bool
	}{
		{"below the budget", 40, 59, false},
		{"at the budget", 40, 60, false},
		{"past the budget", 40, 61, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := New(10, 100)
			require.True(t, g.TryAcquire("", tc.held))
			err := g.Acquire(context.Background(), time.Now().Add(50*time.Millisecond), "", tc.want)
			if tc.waits {
				require.ErrorIs(t, err, ErrTimeout)
			} else {
				require.NoError(t, err)
			}
		})
	}
}

// Within one key waiters are admitted in order; a large head holds back
// small ones.
func TestGate_acquire_fifoWithinKey(t *testing.T) {
	g := New(2, 100)
	ctx := context.Background()
	require.NoError(t, g.Acquire(ctx, time.Time{}, "", 60))
	require.NoError(t, g.Acquire(ctx, time.Time{}, "", 40)) // at the byte budget
	require.False(t, g.TryAcquire("", 0), "at the count")

	order := make(chan string, 3)
	for i, bytes := range []int64{70, 10, 10} {
		queue(t, g, "", bytes, fmt.Sprint(i), order)
	}
	g.Release(40) // 60 held: 70 does not fit, so nobody goes
	_, _, w := g.Usage()
	require.Equal(t, 3, w)
	g.Release(60) // 0 held: 70 then 10 fit (count 2)
	require.ElementsMatch(t, []string{"0", "1"}, []string{<-order, <-order})
	_, _, w = g.Usage()
	require.Equal(t, 1, w)
	g.Release(70)
	require.Equal(t, "2", <-order)
	n, b, w := g.Usage()
	require.Equal(t, []any{2, int64(20), 0}, []any{n, b, w})
}

// Keys with waiters take turns, one admission each, whatever their
// numbers of waiters; each key's waiters go in the order they came.
func TestGate_acquire_roundRobin(t *testing.T) {
	g := New(1, 0)
	require.True(t, g.TryAcquire("", 0))
	order := make(chan string, 16)
	for i := range 5 {
		queue(t, g, "a", 0, fmt.Sprint("a", i), order)
	}
	queue(t, g, "b", 0, "b0", order)
	queue(t, g, "", 0, "shared0", order)
	queue(t, g, "b", 0, "b1", order)
	queue(t, g, "", 0, "shared1", order)
	require.Equal(t, []string{"a0", "b0", "shared0", "a1", "b1", "shared1", "a2"}, admitted(t, g, order, 7))

	// A key that comes while another has many waiters goes next: a has
	// just had its turn (a2).
	queue(t, g, "c", 0, "c0", order)
	require.Equal(t, []string{"c0", "a3", "a4"}, admitted(t, g, order, 3))
	require.Empty(t, g.lines, "keys without waiters are forgotten")
	require.Empty(t, g.turns)
	g.Release(0)
	n, _, w := g.Usage()
	require.Zero(t, n)
	require.Zero(t, w)
}

// A holder that gives its place up and asks again at once (a guest
// yielding its slot, run.yieldSlot) alternates with the one holder of
// another key, whose line empties at each of its admissions: b gets every
// other turn, not one in three behind a's three waiters.
func TestGate_acquire_yieldersAlternate(t *testing.T) {
	g := New(1, 0)
	require.True(t, g.TryAcquire("a", 0))
	order := make(chan string, 16)
	for range 3 {
		queue(t, g, "a", 0, "a", order)
	}
	queue(t, g, "b", 0, "b", order)
	var got []string
	holder := "a"
	for range 8 {
		next := admitted(t, g, order, 1)[0] // the holder gives its place up ...
		got = append(got, next)
		queue(t, g, holder, 0, holder, order) // ... and asks again
		holder = next
	}
	require.Equal(t, []string{"b", "a", "b", "a", "b", "a", "b", "a"}, got)
}

// A waiter that gives up leaves its key's line, and a key left with no
// waiters loses its turn; the others keep their order.
func TestGate_acquire_giveUpKeepsTurns(t *testing.T) {
	g := New(1, 0)
	require.True(t, g.TryAcquire("", 0))
	order := make(chan string, 8)
	queue(t, g, "a", 0, "a0", order)
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { gaveUp <- g.Acquire(ctx, time.Time{}, "b", 0) }()
	require.Eventually(t, func() bool { _, _, w := g.Usage(); return w == 2 }, 5*time.Second, time.Millisecond)
	queue(t, g, "c", 0, "c0", order)
	queue(t, g, "a", 0, "a1", order)
	cancel()
	require.ErrorIs(t, <-gaveUp, context.Canceled)
	require.NotContains(t, g.lines, "b")
	require.Equal(t, []string{"a0", "c0", "a1"}, admitted(t, g, order, 3))
}

func TestGate_acquire_waitEnds(t *testing.T) {
	g := New(1, 0)
	require.True(t, g.TryAcquire("", 0))

	start := time.Now()
	require.ErrorIs(t, g.Acquire(context.Background(), time.Now().Add(20*time.Millisecond), "", 0), ErrTimeout)
	require.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)

	ctx, cancel := context.WithCancelCause(context.Background())
	cause := context.DeadlineExceeded
	time.AfterFunc(10*time.Millisecond, func() { cancel(cause) })
	require.ErrorIs(t, g.Acquire(ctx, time.Time{}, "k", 0), cause)

	n, _, w := g.Usage()
	require.Equal(t, 1, n)
	require.Zero(t, w, "a waiter that gave up left the line")
	g.Release(0)
	require.True(t, g.TryAcquire("", 0), "nothing was lost")
}

// Many keys, waiters that give up at any moment (some just as they are
// admitted, which then pass their place on): the count is never passed,
// and nothing is left held or in line.
func TestGate_acquire_hammer(t *testing.T) {
	const slots = 3
	g := New(slots, 0)
	var held, most atomic.Int64
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%5)*time.Millisecond)
			defer cancel()
			if g.Acquire(ctx, time.Time{}, fmt.Sprint(i%7), 0) == nil {
				h := held.Add(1)
				for m := most.Load(); h > m && !most.CompareAndSwap(m, h); m = most.Load() {
				}
				time.Sleep(time.Millisecond)
				held.Add(-1)
				g.Release(0)
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, most.Load(), int64(slots))
	require.Positive(t, most.Load())
	n, _, w := g.Usage()
	require.Zero(t, n)
	require.Zero(t, w)
	require.Empty(t, g.lines)
	require.Empty(t, g.turns)
}

// The path every run takes when nobody waits: a place free, taken and
// given back.
func BenchmarkGate_acquire_free(b *testing.B) {
	g := New(1, 0)
	ctx := context.Background()
	for b.Loop() {
		if err := g.Acquire(ctx, time.Time{}, "tenant", 0); err != nil {
			b.Fatal(err)
		}
		g.Release(0)
	}
}

// Two goroutines of two keys taking turns on one place: every acquire
// waits, so the fair line is used each time.
func BenchmarkGate_acquire_contended(b *testing.B) {
	g := New(1, 0)
	ctx := context.Background()
	b.SetParallelism(1)
	var key atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		k := fmt.Sprint(key.Add(1) % 2)
		for pb.Next() {
			if err := g.Acquire(ctx, time.Time{}, k, 0); err != nil {
				b.Fatal(err)
			}
			g.Release(0)
		}
	})
}

// WaitingBy counts a key's waiters apart from the others'.
func TestGate_waitingBy(t *testing.T) {
	g := New(1, 0)
	require.True(t, g.TryAcquire("", 0))
	for _, key := range []string{"a", "a", "b"} {
		go func() { _ = g.Acquire(context.Background(), time.Time{}, key, 0) }()
	}
	require.Eventually(t, func() bool { _, _, n := g.Usage(); return n == 3 }, 10*time.Second, time.Millisecond)
	same, other := g.WaitingBy("a")
	require.Equal(t, [2]int{2, 1}, [2]int{same, other})
	same, other = g.WaitingBy("c")
	require.Equal(t, [2]int{0, 3}, [2]int{same, other})
	for range 3 {
		g.Release(0)
	}
	require.Eventually(t, func() bool { s, o := g.WaitingBy("a"); return s+o == 0 }, 10*time.Second, time.Millisecond)
	g.Release(0)
}
