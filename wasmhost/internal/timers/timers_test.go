package timers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
)

var timeZero = time.Unix(1_700_000_000, 0)

func TestTimerQueue(t *testing.T) {
	var q Queue
	now := timeZero
	a, _ := q.Add(now, 30)
	b, _ := q.Add(now, 10)
	c, _ := q.Add(now, 10)
	q.Clear(b)
	q.Clear(999)
	require.Equal(t, 2, q.Len())
	next, ok := q.Next()
	require.True(t, ok)
	require.Equal(t, now.Add(10e6), next)
	_, ok = q.Due(now)
	require.False(t, ok)
	id, ok := q.Due(now.Add(50e6))
	require.True(t, ok)
	require.Equal(t, c, id)
	id, _ = q.Due(now.Add(50e6))
	require.Equal(t, a, id)
	_, ok = q.Next()
	require.False(t, ok)

	for range abi.MaxTimers {
		_, ok := q.Add(now, 1)
		require.True(t, ok)
	}
	_, ok = q.Add(now, 1)
	require.False(t, ok, "more than abi.MaxTimers")
}

func TestTimerQueue_compactsCleared(t *testing.T) {
	var q Queue
	for range 100_000 {
		id, _ := q.Add(timeZero, 1000)
		q.Clear(id)
	}
	require.Zero(t, q.Len())
	require.Less(t, len(q.order), 200)
}
