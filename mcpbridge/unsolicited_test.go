package mcpbridge

import (
	"bytes"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBudget_take_burstThenRate(t *testing.T) {
	now := time.Unix(0, 0)
	b := newBudget(func() time.Time { return now })
	for i := range unsolicitedBurst {
		require.True(t, b.take(), "message %d of the burst", i+1)
	}
	require.False(t, b.take(), "one past the burst")
	now = now.Add(time.Second / unsolicitedRate / 2)
	require.False(t, b.take(), "half a token refilled")
	now = now.Add(time.Second / unsolicitedRate / 2)
	require.True(t, b.take(), "one token refilled")
	require.False(t, b.take())
	now = now.Add(time.Hour)
	for range unsolicitedBurst {
		require.True(t, b.take())
	}
	require.False(t, b.take(), "refilling stops at the burst")
}

// With the clock stopped, the guard passes the burst of notifications and
// requests, drops the rest, and always passes answers.
func TestStdoutGuard_Read_dropsUnsolicitedPastBudget(t *testing.T) {
	const note = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`
	const ping = `{"jsonrpc":"2.0","id":7,"method":"ping"}`
	const answer = `{"jsonrpc":"2.0","id":1,"result":{}}`
	for _, tt := range []struct {
		name        string
		unsolicited int
	}{
		{"below the burst", unsolicitedBurst - 1},
		{"at the burst", unsolicitedBurst},
		{"past the burst", unsolicitedBurst + 500},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var in strings.Builder
			for i := range tt.unsolicited { // tt.unsolicited notifications, each followed by a request
				if i == tt.unsolicited/2 {
					in.WriteString(answer + "\n")
				}
				in.WriteString(note + "\n")
				in.WriteString(ping + "\n")
			}
			in.WriteString(answer + "\n")
			var dropped atomic.Int64
			g := newStdoutGuard(io.NopCloser(strings.NewReader(in.String())), &dropped)
			stopped := time.Unix(0, 0)
			g.budget = newBudget(func() time.Time { return stopped })
			out, err := io.ReadAll(g)
			require.NoError(t, err)
			lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
			passed := min(tt.unsolicited, unsolicitedBurst)
			require.Len(t, lines, passed+tt.unsolicited+2)
			require.Equal(t, 2, bytes.Count(out, []byte(answer)), "answers are never dropped")
			require.Equal(t, tt.unsolicited, bytes.Count(out, []byte(ping)), "nor requests: the upstream waits for their answers")
			require.EqualValues(t, tt.unsolicited-passed, dropped.Load())
		})
	}
}
