package executor_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// TestSandbox_calls_settleInAnyOrder runs calls one after another and in
// batches of 1 to 40 at once, settled in whatever order the tools finish,
// so that the guest's table of pending calls (guest/glue/calls.c) empties
// slots, leaves tombstones, reuses them and grows: every call must settle
// its own promise with its own result, once.
func TestSandbox_calls_settleInAnyOrder(t *testing.T) {
	e := awaitOrderExecutor(t)
	r := runProgram(e, `
		let got = 0, want = 0, n = 0;
		for (let round = 0; round < 30; round++) {
			const size = (round * 7) % 40 + 1;
			const batch = Array.from({length: size}, (_, k) => tools.echo({i: round * 1000 + k}));
			for (let k = 0; k < 3; k++) { got += (await tools.echo({i: k})).i; want += k; n++; }
			const vs = await Promise.all(batch);
			vs.forEach((v, k) => { got += v.i; want += round * 1000 + k; n++; });
		}
		return [got === want ? "ok" : got + " != " + want, String(n)];`)
	require.True(t, r.OK(), r.Text)
	var out struct{ Result []string }
	require.NoError(t, json.Unmarshal(r.Value, &out), string(r.Value))
	require.Equal(t, []string{"ok", "685"}, out.Result)
}

// TestSandbox_calls_collidingSlotsSettle makes two calls share a slot of
// the guest's table (ids 64 apart, while it has 64 slots: the first call is
// pending when the second is made, so the second lands in the next slot)
// and settles the first while the second is pending: emptying the first's
// slot then would hide the second from its lookup and its promise would
// never settle (guest/glue/calls.c, remove_call).
func TestSandbox_calls_collidingSlotsSettle(t *testing.T) {
	reg := ptcRegistry(t, echoTool, registry.Tool{
		Name: "slow", Description: "Return the arguments a little later.", ConcurrencySafe: true,
		Body: func(ctx context.Context, in api.Input) (api.Output, error) {
			select {
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
			}
			return api.Output{Value: in.Args}, nil
		},
	})
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(realRuntime(t)))
	r := runProgram(e, `
		const first = tools.slow({i: 1});                  // call 1
		let s = 0;
		for (let i = 2; i < 65; i++) s += (await tools.echo({i})).i;
		const second = tools.slow({i: 65});                // call 65: call 1's slot is taken
		const a = (await first).i, b = (await second).i;
		return [String(a), String(b), String(s)];`)
	require.True(t, r.OK(), r.Text)
	var out struct{ Result []string }
	require.NoError(t, json.Unmarshal(r.Value, &out), string(r.Value))
	require.Equal(t, []string{"1", "65", "2079"}, out.Result)
}
