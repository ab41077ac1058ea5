package serve

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestComputeBucket_available(t *testing.T) {
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
			ok, wait := b.available()
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
	ok, _ := b.available()
	require.False(t, ok, "an idle hour refills the bucket only to its capacity")
}
