package executor_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
)

// parkCheckWorld has tools that answer later (for the parking caller):
// pay, which needs approval; note, which accepts anything; and post,
// which accepts public data only; beside doc, a tool whose results are
// handles to private data. sinks record what reached each body.
type parkCheckWorld struct {
	ex              *executor.Executor
	pay, note, post sink
}

func newParkCheckWorld(t testing.TB) *parkCheckWorld {
	t.Helper()
	w := &parkCheckWorld{}
	pub := api.Label{Integrity: api.Untrusted, Confidentiality: api.Public}
	reg := ptcRegistry(t,
		registry.Tool{Name: "pay", Body: w.pay.body, Policy: policy.Declaration{NeedsApproval: true}},
		registry.Tool{Name: "note", ConcurrencySafe: true, Body: w.note.body},
		registry.Tool{Name: "post", Body: w.post.body, Policy: policy.Declaration{Accepts: &policy.Accepts{Call: &pub}}},
		registry.Tool{Name: "doc", ConcurrencySafe: true, Policy: policy.Declaration{Labels: &private, Handle: true},
			Body: func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput("the quarterly numbers") }},
	)
	w.ex = newExecutor(t, reg, executor.NewConfig().WithRuntime(realRuntime(t)).WithApprover(executor.ParkApprovals(elsewhere)))
	return w
}

func answersLater(tool string) bool { return tool == "pay" || tool == "note" || tool == "post" }

// A call of a tool that needs approval, which the run's approved plan
// covers, is not asked about (the plan was the approval): the program
// parks on it for its caller, a tool's call, as on any other. Unbound, it
// parks for a person first; outside the plan, it is DENIED without
// parking, and nothing reaches the caller.
func TestParkCheck_planFirst(t *testing.T) {
	w := newParkCheckWorld(t)
	ctx := context.Background()
	code := `try { return await tools.pay({amount: 10}) } catch (e: any) { return e.code + ": " + e.message }`
	p, err := w.ex.Plan("", code)
	require.NoError(t, err)
	require.Equal(t, []string{"pay"}, p.Tools)

	res, parked := w.ex.ExecuteParkable(ctx, planCall(code, p), answersLater)
	require.NotNil(t, parked, "a plan-covered call parks for its caller: %+v", res)
	calls := parked.Calls()
	require.Len(t, calls, 1)
	require.Equal(t, executor.ParkedTool, calls[0].Kind, "the caller's call, not a person's approval")
	require.JSONEq(t, `{"amount":10}`, string(calls[0].Args))
	res, again := parked.Resume(ctx, map[int32]executor.Answer{calls[0].ID: {Output: api.Output{Value: json.RawMessage(`"paid"`)}}})
	require.Nil(t, again)
	require.JSONEq(t, `"paid"`, approvalResult(t, res))

	res, parked = w.ex.ExecuteParkable(ctx, runCodeCall(code), answersLater)
	require.NotNil(t, parked, "%+v", res)
	require.Equal(t, executor.ParkedApproval, parked.Calls()[0].Kind, "unbound, a person decides first")
	require.True(t, parked.Release())

	p.Tools = nil // the approver deselects pay
	res, parked = w.ex.ExecuteParkable(ctx, planCall(code, p), answersLater)
	require.Nil(t, parked, "a call outside the plan is not parked for its caller")
	require.Contains(t, approvalResult(t, res), "DENIED: pay is outside the approved plan")
	require.Empty(t, w.pay.got(), "nothing reached the tool")

	// So is a call of a tool that asks nothing, deselected.
	code = `let a; try { a = await tools.note({n: 1}) } catch (e: any) { a = e.code }
return [a, await tools.pay({amount: 10})]`
	p, err = w.ex.Plan("", code)
	require.NoError(t, err)
	p.Tools = []string{"pay"}
	res, parked = w.ex.ExecuteParkable(ctx, planCall(code, p), answersLater)
	require.NotNil(t, parked, "%+v", res)
	calls = parked.Calls()
	require.Len(t, calls, 1, "parked on pay only: note was DENIED before")
	require.Equal(t, "pay", calls[0].Tool)
	res, again = parked.Resume(ctx, map[int32]executor.Answer{calls[0].ID: {Output: api.Output{Value: json.RawMessage(`"paid"`)}}})
	require.Nil(t, again)
	require.JSONEq(t, `["DENIED","paid"]`, approvalResult(t, res))
	require.Empty(t, w.note.got())
}

// A handle passed to a call the program parks on reaches the caller as
// its value (Parked.Calls), before and after the parked bytes move; a
// handle whose label the tool does not accept, or a marker of no handle
// the run holds, is refused before parking: the caller never sees it.
func TestParkCheck_handlesInHeldCalls(t *testing.T) {
	w := newParkCheckWorld(t)
	ctx := context.Background()
	res, parked := w.ex.ExecuteParkable(ctx, runCodeCall(`const h = await tools.doc({});
		const r = await tools.note({text: h, n: 1}); return {r, h}`), answersLater)
	require.NotNil(t, parked, "%+v", res)
	calls := parked.Calls()
	require.Len(t, calls, 1)
	require.JSONEq(t, `{"text":"the quarterly numbers","n":1}`, string(calls[0].Args), "the value, never the marker")
	data, err := parked.Marshal()
	require.NoError(t, err)
	require.True(t, parked.Release())

	other := newParkCheckWorld(t)
	restored, err := other.ex.RestoreParked(data)
	require.NoError(t, err)
	calls = restored.Calls()
	require.JSONEq(t, `{"text":"the quarterly numbers","n":1}`, string(calls[0].Args), "restored, the handle's value still")
	res, again := restored.Resume(ctx, map[int32]executor.Answer{calls[0].ID: {Output: api.Output{Value: json.RawMessage(`"noted"`)}}})
	require.Nil(t, again)
	require.True(t, res.OK(), "%+v", res.Err)
	require.Len(t, res.Handles, 1)
	require.JSONEq(t, `"the quarterly numbers"`, string(res.Handles[0].Value))

	for _, tt := range []struct{ name, code, want string }{
		{"a label past what the tool accepts", `const h = await tools.doc({}); return await tools.post({text: h})`,
			"post may not receive private data in the call"},
		{"a marker of no handle the run holds", `await tools.doc({}); return await tools.note({x: {"$ptcx.handle": "` + strings.Repeat("0", 32) + `"}})`,
			"is handle-shaped but not a handle this execution holds"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, parked := w.ex.ExecuteParkable(ctx, runCodeCall(strings.Replace(catchFirst, "%s", tt.code, 1)), answersLater)
			require.Nil(t, parked, "refused before parking")
			require.Contains(t, string(heldResult(t, res)), tt.want)
			require.Empty(t, w.post.got())
			require.Empty(t, w.note.got(), "nothing reached the tool")
		})
	}
}
