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

// A live wait's call taken over by waitLive (takeWaitingLive) and answered
// before the resumed program's client tool body adopts it keeps its result:
// the body finds the call, answer in hand, not a new pending one (a result
// posted in that window was lost: the execution stayed pending on a call
// the client had answered).
func TestExecution_liveCall_answeredBeforeAdoption(t *testing.T) {
	x := newExecution("ex_1", nil, nil, "", true, 8)
	pc := &pendingCall{call: PendingCall{ID: "ex_1:ptc:1", Kind: KindTool, Name: "ask"}, answer: make(chan ToolResult, 1), parkID: 1}
	x.pending, x.waiting, x.status = []*pendingCall{pc}, []*pendingCall{pc}, StatusPending

	require.Empty(t, x.takeWaitingLive(), "nothing answered yet")
	n, due, herr := x.deliver([]ToolResult{{ID: "ex_1:ptc:1", OK: true, Value: []byte(`"late"`)}})
	require.Nil(t, herr)
	require.Equal(t, 1, n)
	require.False(t, due)
	require.Empty(t, x.pending, "answered: it left pending")

	got := x.adoptPending("ex_1:ptc:1")
	require.Same(t, pc, got, "the body adopts the answered call")
	r := <-got.answer
	require.JSONEq(t, `"late"`, string(r.Value))
	require.Nil(t, x.adoptPending("ex_1:ptc:1"), "adopted once")
}
