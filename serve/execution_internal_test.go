package serve

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Past max_events a log line is counted, not kept, and wakes no waiter.
func TestExecution_logLine_pastMaxEventsWakesNobody(t *testing.T) {
	x := newExecution("ex_1", nil, nil, "", false, 2)
	for i := range 2 {
		ch := x.changed
		x.logLine("kept")
		require.True(t, closed(ch), "line %d is an event: its waiters are woken", i+1)
	}
	ch := x.changed
	x.logLine("dropped")
	require.False(t, closed(ch), "past max_events nothing new to see")
	require.Len(t, x.events, 2)
	require.Equal(t, 1, x.dropped, "the dropped line is counted")
}
