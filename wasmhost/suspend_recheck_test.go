package wasmhost_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost"
)

// A run waiting on a dispatched call that never answers is asked again
// at Program.Recheck, and suspends there when Suspend says so; without a
// value on Recheck it is not asked (it would wait to its wall limit).
func TestRuntime_Run_recheckAsksSuspendAgain(t *testing.T) {
	rt := sharedRuntime(t)
	ctx := context.Background()
	recheck := make(chan struct{}, 1)
	var asks atomic.Int32
	var held atomic.Bool // set by the dispatcher: the call turned parkable
	disp := wasmhost.DispatcherFunc(func(name string, args json.RawMessage, done func(wasmhost.CallResult)) {
		held.Store(true)
		recheck <- struct{}{}
	})
	out, err := rt.Run(ctx, wasmhost.Program{JS: `return await tools.wait({});`, Tools: []string{"wait"}, Recheck: recheck,
		Suspend: func(q wasmhost.Quiescence) bool {
			asks.Add(1)
			return held.Load() && len(q.Calls) == 1 && q.Calls[0].State == wasmhost.CallDispatched
		}}, disp)
	require.NoError(t, err)
	require.NotNil(t, out.Suspended, "suspended at the recheck")
	require.Len(t, out.Suspended.Calls, 1)
	require.Equal(t, wasmhost.CallDispatched, out.Suspended.Calls[0].State)
	require.GreaterOrEqual(t, asks.Load(), int32(2), "asked after the export, and again at the recheck")
	rt.RecycleSnapshot(out.Suspended)
}
