package bench

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// output keeps at most maxDriverOutput bytes of what a process writes (at
// the bound and past it), stops it at its timeout, and says what it wrote
// on standard error when it fails.
func TestOutput_bounded(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{maxDriverOutput, maxDriverOutput + 1, 2 * maxDriverOutput} {
		out, err := output(ctx, time.Minute, "peer", "sh", "-c", "head -c "+strconv.Itoa(n)+" /dev/zero")
		require.NoError(t, err)
		require.Len(t, out, maxDriverOutput, "%d bytes written", n)
	}
	out, err := output(ctx, time.Minute, "peer", "sh", "-c", "printf abc")
	require.NoError(t, err)
	require.Equal(t, "abc", string(out))

	start := time.Now()
	_, err = output(ctx, 200*time.Millisecond, "peer", "sh", "-c", "sleep 30")
	require.ErrorContains(t, err, "context deadline exceeded")
	require.Less(t, time.Since(start), 20*time.Second, "stopped at its timeout, not at its end")

	_, err = output(ctx, time.Minute, "peer", "sh", "-c", "echo why >&2; exit 3")
	require.ErrorContains(t, err, "peer: exit status 3: why")
}
