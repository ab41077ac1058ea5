package compute

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// busy is the wait Reserve reports while the runs in flight hold the rest.
const busy = 2 * time.Second

func TestBucket_Reserve(t *testing.T) {
	tests := []struct {
		name    string
		charge  time.Duration
		elapsed time.Duration
		ok      bool
		wait    time.Duration
	}{
		{"below the quota", 5 * time.Second, 0, true, 0},
		{"at the quota", 6 * time.Second, 0, false, time.Millisecond * 10},
		{"past the quota", 9 * time.Second, 0, false, 30*time.Second + 10*time.Millisecond},
		{"refilled after the wait", 9 * time.Second, 31 * time.Second, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Unix(1000, 0)
			b := New(6, busy, func() time.Time { return now }) // 6 s per minute: 0.1 s per second
			b.Charge(tt.charge)
			now = now.Add(tt.elapsed)
			ok, wait := b.Reserve(0)
			require.Equal(t, tt.ok, ok)
			require.InDelta(t, tt.wait.Seconds(), wait.Seconds(), 0.001)
		})
	}
}

func TestBucket_Charge_capacity(t *testing.T) {
	now := time.Unix(1000, 0)
	b := New(6, busy, func() time.Time { return now })
	now = now.Add(time.Hour)
	b.Charge(6 * time.Second)
	ok, _ := b.Reserve(0)
	require.False(t, ok, "an idle hour refills the bucket only to its capacity")
}

// TestBucket_Reserve_overdraw is issue 32's item 7: with 1 CPU-s per
// minute and runs of a 4 s limit, eight concurrent runs were all admitted.
// Reservations admit one; the runs in flight together overdraw by at most
// one run's limit, whatever they use.
func TestBucket_Reserve_overdraw(t *testing.T) {
	now := time.Unix(1000, 0)
	b := New(1, busy, func() time.Time { return now })
	admitted := 0
	for range 8 {
		if ok, _ := b.Reserve(4 * time.Second); ok {
			admitted++
		}
	}
	require.Equal(t, 1, admitted, "only one run of a 4 s limit fits a 1 s bucket at once")
	ok, wait := b.Reserve(4 * time.Second)
	require.False(t, ok)
	require.Equal(t, busy, wait, "a run in flight blocks the next: retry when it ends")

	// The run uses all of its 4 s: the bucket is 3 s below zero, one limit
	// past it at most, and nothing is admitted until it refills.
	b.Charge(4 * time.Second)
	b.Unreserve(4 * time.Second)
	require.InDelta(t, -3, b.tokens, 1e-9)
	ok, wait = b.Reserve(4 * time.Second)
	require.False(t, ok)
	require.InDelta(t, 180.06, wait.Seconds(), 0.01, "3 s below zero at 1 s per minute: three minutes")

	// A run that uses less than its limit gives the rest back as it ends.
	now = now.Add(4 * time.Minute) // refilled to the capacity, 1 s
	ok, _ = b.Reserve(4 * time.Second)
	require.True(t, ok)
	b.Charge(100 * time.Millisecond)
	b.Unreserve(4 * time.Second)
	require.InDelta(t, 0.9, b.tokens, 1e-9)
	require.Zero(t, b.reserved)
	ok, _ = b.Reserve(4 * time.Second)
	require.True(t, ok, "a run that used 0.1 s of its 4 s reservation leaves room for the next")
}

func TestBucket_Unreserve_neverNegative(t *testing.T) {
	b := New(6, busy, time.Now)
	b.Unreserve(time.Second)
	require.Zero(t, b.reserved)
}

// TestBucket_hammer admits runs from many goroutines at once, round after
// round on a bucket refilled between rounds (run it under -race): the runs
// admitted together, each using its whole limit, overdraw the bucket by at
// most one run's limit.
func TestBucket_hammer(t *testing.T) {
	const workers, rounds, limit = 8, 200, 300 * time.Millisecond
	var now atomic.Int64
	now.Store(time.Unix(1000, 0).UnixNano())
	b := New(1, busy, func() time.Time { return time.Unix(0, now.Load()) })
	for range rounds {
		now.Add(int64(2 * time.Minute)) // refilled to its capacity, 1 s
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if ok, _ := b.Reserve(limit); ok {
					admitted.Add(1)
				}
			}()
		}
		wg.Wait()
		for range admitted.Load() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b.Charge(limit)
				b.Unreserve(limit)
			}()
		}
		wg.Wait()
		require.Equal(t, int64(4), admitted.Load(), "1 s admits runs of 0.3 s while some is left: four")
		require.GreaterOrEqual(t, b.tokens, -limit.Seconds()-1e-9, "overdrawn past one run's limit")
		require.InDelta(t, 0, b.reserved, 1e-9, "every reservation given back")
	}
}
