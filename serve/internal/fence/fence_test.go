package fence

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// testFence is a fence of a 1 s lease on clock, without its watchdog
// timer (the test calls expire), recording the epochs that lapsed.
func testFence(clock *fakeClock) (*Fence, func() []uint64) {
	var mu sync.Mutex
	var lapsed []uint64
	f := New("n1", time.Second, clock.now, func(e uint64) {
		mu.Lock()
		defer mu.Unlock()
		lapsed = append(lapsed, e)
	})
	f.watch = false
	return f, func() []uint64 {
		mu.Lock()
		defer mu.Unlock()
		return append([]uint64(nil), lapsed...)
	}
}

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func TestFence_holds_aroundLeaseMinusMargin(t *testing.T) {
	clock := &fakeClock{t: t0}
	f, _ := testFence(clock)
	require.False(t, f.Holds(1), "no renewal yet")
	require.Equal(t, 800*time.Millisecond, f.Limit(), "lease − margin, the margin a fifth of the lease")
	f.Renewed(t0)
	tests := []struct {
		name  string
		after time.Duration
		holds bool
	}{
		{"just renewed", 0, true},
		{"below lease − margin", 800*time.Millisecond - time.Nanosecond, true},
		{"at lease − margin", 800 * time.Millisecond, false},
		{"past lease − margin", 800*time.Millisecond + time.Nanosecond, false},
		{"past the lease", 1200 * time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock.set(t0.Add(tt.after))
			require.Equal(t, tt.holds, f.Holds(1))
			_, live := f.Epoch()
			require.Equal(t, tt.holds, live)
			require.False(t, f.Holds(2), "another epoch never holds")
		})
	}
}

func TestFence_renewed_beforeTheLimitKeepsTheEpoch(t *testing.T) {
	clock := &fakeClock{t: t0}
	f, lapsed := testFence(clock)
	f.Renewed(t0)
	start := t0.Add(333 * time.Millisecond)
	clock.set(start.Add(400 * time.Millisecond)) // landed at 733 ms, below the limit
	f.Renewed(start)
	clock.set(t0.Add(1100 * time.Millisecond)) // past the first renewal's limit, below the second's
	require.True(t, f.Holds(1))
	require.Empty(t, lapsed())
}

func TestFence_renewed_lateRenewalEndsTheEpoch(t *testing.T) {
	clock := &fakeClock{t: t0}
	f, lapsed := testFence(clock)
	f.Renewed(t0)
	// Stopped for 5 s: the first renewal after that starts and lands late.
	start := t0.Add(5 * time.Second)
	clock.set(start.Add(10 * time.Millisecond))
	f.Renewed(start)
	require.Equal(t, []uint64{1}, lapsed(), "epoch 1 ended")
	require.False(t, f.Holds(1), "what ran under the ended epoch never acts again")
	require.True(t, f.Holds(2), "new work runs under the next epoch")
	e, live := f.Epoch()
	require.True(t, live)
	require.Equal(t, uint64(2), e)
}

func TestFence_renewed_landedPastTheLimitProvesNothing(t *testing.T) {
	clock := &fakeClock{t: t0}
	f, lapsed := testFence(clock)
	f.Renewed(t0)
	start := t0.Add(700 * time.Millisecond)
	clock.set(start.Add(900 * time.Millisecond)) // the write took 900 ms: its until may be past already
	f.Renewed(start)
	require.Equal(t, []uint64{1}, lapsed(), "the lease lapsed before it landed")
	_, live := f.Epoch()
	require.False(t, live, "a renewal that landed past lease − margin proves nothing")
	require.False(t, f.Holds(2))
}

func TestFence_expire_endsTheEpochOnce(t *testing.T) {
	clock := &fakeClock{t: t0}
	f, lapsed := testFence(clock)
	f.Renewed(t0)
	clock.set(t0.Add(799 * time.Millisecond))
	f.expire()
	require.Empty(t, lapsed(), "below the limit the watchdog does nothing")
	clock.set(t0.Add(800 * time.Millisecond))
	f.expire()
	f.expire()
	require.Equal(t, []uint64{1}, lapsed(), "the epoch ends once")
	require.Contains(t, f.Refusal(), "node n1 cannot prove its cluster lease is current")

	start := t0.Add(time.Second)
	clock.set(start)
	f.Renewed(start)
	require.Equal(t, []uint64{1}, lapsed(), "a renewal after the watchdog ends nothing more")
	require.True(t, f.Holds(2))
	require.False(t, f.Holds(1))
}

// Checks race renewals, lapses and the watchdog: an epoch, once seen
// ended, never holds again, and the current one holds only while proven.
func TestFence_holds_hammer(t *testing.T) {
	clock := &fakeClock{t: t0}
	f, _ := testFence(clock)
	f.Renewed(t0)
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 8 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				cur, _ := f.Epoch()
				for e := uint64(1); e < cur; e++ {
					if f.Holds(e) {
						t.Errorf("epoch %d holds after epoch %d began", e, cur)
						return
					}
				}
			}
		}()
	}
	now := t0
	for i := range 2000 {
		switch i % 4 {
		case 0, 1: // renewals in time
			now = now.Add(300 * time.Millisecond)
			clock.set(now)
			f.Renewed(now)
		case 2: // stopped past the limit: the watchdog notices
			now = now.Add(time.Second)
			clock.set(now)
			f.expire()
		case 3: // a renewal lands after the lapse
			f.Renewed(now)
		}
	}
	close(stop)
	readers.Wait()
	e, live := f.Epoch()
	require.True(t, live)
	require.Equal(t, uint64(501), e, "one epoch ended per lapse")
}
