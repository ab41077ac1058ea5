package serve

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestComputeBucket_reserve(t *testing.T) {
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
			b := newComputeBucket(6, func() time.Time { return now }) // 6 s per minute: 0.1 s per second
			b.charge(tt.charge)
			now = now.Add(tt.elapsed)
			ok, wait := b.reserve(0)
			require.Equal(t, tt.ok, ok)
			require.InDelta(t, tt.wait.Seconds(), wait.Seconds(), 0.001)
		})
	}
}

func TestComputeBucket_capacity(t *testing.T) {
	now := time.Unix(1000, 0)
	b := newComputeBucket(6, func() time.Time { return now })
	now = now.Add(time.Hour)
	b.charge(6 * time.Second)
	ok, _ := b.reserve(0)
	require.False(t, ok, "an idle hour refills the bucket only to its capacity")
}

// TestComputeBucket_reserve_overdraw is issue 32's item 7: with 1 CPU-s per
// minute and runs of a 4 s limit, eight concurrent runs were all admitted.
// Reservations admit one; the runs in flight together overdraw by at most
// one run's limit, whatever they use.
func TestComputeBucket_reserve_overdraw(t *testing.T) {
	now := time.Unix(1000, 0)
	b := newComputeBucket(1, func() time.Time { return now })
	admitted := 0
	for range 8 {
		if ok, _ := b.reserve(4 * time.Second); ok {
			admitted++
		}
	}
	require.Equal(t, 1, admitted, "only one run of a 4 s limit fits a 1 s bucket at once")
	ok, wait := b.reserve(4 * time.Second)
	require.False(t, ok)
	require.Equal(t, DefaultRetryAfter, wait, "a run in flight blocks the next: retry when it ends")

	// The run uses all of its 4 s: the bucket is 3 s below zero, one limit
	// past it at most, and nothing is admitted until it refills.
	b.charge(4 * time.Second)
	b.unreserve(4 * time.Second)
	require.InDelta(t, -3, b.tokens, 1e-9)
	ok, wait = b.reserve(4 * time.Second)
	require.False(t, ok)
	require.InDelta(t, 180.06, wait.Seconds(), 0.01, "3 s below zero at 1 s per minute: three minutes")

	// A run that uses less than its limit gives the rest back as it ends.
	now = now.Add(4 * time.Minute) // refilled to the capacity, 1 s
	ok, _ = b.reserve(4 * time.Second)
	require.True(t, ok)
	b.charge(100 * time.Millisecond)
	b.unreserve(4 * time.Second)
	require.InDelta(t, 0.9, b.tokens, 1e-9)
	require.Zero(t, b.reserved)
	ok, _ = b.reserve(4 * time.Second)
	require.True(t, ok, "a run that used 0.1 s of its 4 s reservation leaves room for the next")
}

func TestComputeBucket_unreserve_neverNegative(t *testing.T) {
	b := newComputeBucket(6, time.Now)
	b.unreserve(time.Second)
	require.Zero(t, b.reserved)
}
