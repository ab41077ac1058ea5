package serve

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestIdleRelease_due(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var r idleRelease
	require.False(t, r.due(t0.Add(time.Hour)), "nothing ran yet: nothing to give back")

	r.begin()
	r.begin()
	r.end(t0)
	require.False(t, r.due(t0.Add(time.Hour)), "an execution still runs")
	r.end(t0)
	require.False(t, r.due(t0.Add(IdleReleaseAfter-time.Nanosecond)), "below IdleReleaseAfter")
	require.True(t, r.due(t0.Add(IdleReleaseAfter)), "at IdleReleaseAfter")
	require.True(t, r.due(t0.Add(IdleReleaseAfter+time.Second)), "past IdleReleaseAfter")

	require.True(t, r.release(t0.Add(IdleReleaseAfter), noTrim))
	require.False(t, r.release(t0.Add(time.Hour), noTrim), "once per idle period: nothing changed since")

	t1 := t0.Add(time.Minute)
	r.evicted(t1)
	require.False(t, r.due(t1.Add(IdleReleaseAfter-time.Nanosecond)), "an eviction starts the wait again")
	require.True(t, r.release(t1.Add(IdleReleaseAfter), noTrim), "what the eviction freed is given back")
}

func noTrim() {}

// A release never happens while an execution runs, however long ago the
// last one ended.
func TestIdleRelease_notWhileRunning(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var r idleRelease
	r.begin()
	r.end(t0)
	r.begin()
	require.False(t, r.release(t0.Add(time.Hour), noTrim))
	r.end(t0.Add(2 * time.Hour))
	require.False(t, r.release(t0.Add(2*time.Hour+IdleReleaseAfter/2), noTrim))
	require.True(t, r.release(t0.Add(2*time.Hour+IdleReleaseAfter), noTrim))
}

// The counters hold under concurrent begin/end (go test -race).
func TestIdleRelease_concurrent(t *testing.T) {
	var r idleRelease
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 1000 {
				r.begin()
				_ = r.due(time.Now())
				r.end(time.Now())
			}
		}()
	}
	for range 8 {
		<-done
	}
	require.Equal(t, int64(0), r.live.Load())
	trimmed := 0
	require.True(t, r.release(time.Now().Add(IdleReleaseAfter), func() { trimmed++ }))
	require.Equal(t, 1, trimmed, "the sandbox is trimmed with the release")
}
