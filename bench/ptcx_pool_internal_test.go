package bench

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/wasmhost"
)

// waitPool returns once the pool holds the instances wanted (below and at
// its size); past what it can hold it fails at its bound, saying how many
// it held; and it stops at the context's end.
func TestWaitPool(t *testing.T) {
	testkit.RequireGuest(t)
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, wasmhost.NewConfig().WithPool(2))
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Close(ctx)) }()
	_, err = rt.Run(ctx, wasmhost.Program{JS: `return 1`}, echoDispatcher(nil))
	require.NoError(t, err)
	for _, want := range []int{1, 2} {
		require.NoError(t, waitPool(ctx, rt, want, poolFillBound), "want %d", want)
	}
	start := time.Now()
	err = waitPool(ctx, rt, 5, 50*time.Millisecond)
	require.ErrorContains(t, err, "of 5 idle instances after 50ms")
	require.Less(t, time.Since(start), 10*time.Second)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, waitPool(cancelled, rt, 5, poolFillBound), context.Canceled)
}
