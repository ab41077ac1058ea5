package executor_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
)

// A live wait that answers every call continues the program live: no
// Parked, the calls go through every phase as nested calls with the
// answers standing for their bodies, and the call IDs it was shown are
// theirs.
func TestExecutor_WithLiveWait_answeredContinuesLive(t *testing.T) {
	w := newParkWorld(t)
	var shown [][]executor.WaitingCall
	lw := func(_ context.Context, calls []executor.WaitingCall) (map[int32]executor.Answer, bool) {
		shown = append(shown, calls)
		out := map[int32]executor.Answer{}
		for _, c := range calls {
			out[c.ID] = executor.Answer{Output: api.Output{Value: json.RawMessage(`"yes: ` + c.CallID + `"`)}}
		}
		return out, true
	}
	ctx := executor.WithLiveWait(context.Background(), lw)
	res, parked := w.ex.ExecuteParkable(ctx, runCodeCall(`
		const before = await tools.add({});
		const [a, b] = await Promise.all([tools.approve({what: "x"}), tools.approve({what: "y"})]);
		const c = await tools.approve({what: "z"});
		return {before, a, b, c};`), isApprove)
	require.Nil(t, parked)
	require.True(t, res.OK(), "%+v", res.Err)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(res.Value, &v))
	id := res.ID
	require.JSONEq(t, `{"before": 42, "a": "yes: `+id+`:ptc:2", "b": "yes: `+id+`:ptc:3", "c": "yes: `+id+`:ptc:4"}`, string(v.Result))
	require.Len(t, shown, 2, "asked once per point where the program would park")
	require.Equal(t, []string{"approve", "approve"}, []string{shown[0][0].Tool, shown[0][1].Tool})
	require.JSONEq(t, `{"what":"y"}`, string(shown[0][1].Args))
	require.Equal(t, []string{"nested add", "nested approve", "nested approve", "nested approve", "run_code"}, w.notified())
	require.Equal(t, map[string]int{"add": 1}, w.ran, "approve's own body never ran")
}

// A live wait that gives up parks the program where it would have parked,
// its calls the calls it was shown, with the same call IDs.
func TestExecutor_WithLiveWait_givenUpParks(t *testing.T) {
	w := newParkWorld(t)
	var shown []executor.WaitingCall
	ctx := executor.WithLiveWait(context.Background(), func(_ context.Context, calls []executor.WaitingCall) (map[int32]executor.Answer, bool) {
		shown = calls
		return nil, false
	})
	_, parked := w.ex.ExecuteParkable(ctx, runCodeCall(`return await tools.approve({what: "deploy"});`), isApprove)
	require.NotNil(t, parked)
	require.Len(t, shown, 1)
	require.Equal(t, []executor.ParkedCall{{ID: shown[0].ID, Tool: "approve", Args: json.RawMessage(`{"what":"deploy"}`), Kind: executor.ParkedTool}}, parked.Calls())
	require.Equal(t, shown[0].CallID, parked.CallID(shown[0].ID))

	// Resumed with no answer: the call goes to approve's own body.
	res, again := parked.Resume(context.Background(), nil)
	require.Nil(t, again)
	require.True(t, res.OK(), "%+v", res.Err)
	require.Equal(t, map[string]int{"approve": 1}, w.ran)
}
