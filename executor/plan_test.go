package executor_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/plan"
	"github.com/ptcx/ptcx/registry"
)

func planCall(code string, p *plan.Plan) executor.Call {
	c := runCodeCall(code)
	c.Plan = p
	return c
}

func readPlan(t *testing.T, ex *executor.Executor, code string) *plan.Plan {
	t.Helper()
	p, err := ex.Plan("", code)
	require.NoError(t, err)
	return p
}

// caught runs a program that records the code of each call's failure.
const twoTools = `const out: string[] = [];
try { out.push("add " + await tools.add({})) } catch (e: any) { out.push("add " + e.code) }
try { out.push("approve " + await tools.approve({what: "x"})) } catch (e: any) { out.push("approve " + e.code + ": " + e.message) }
return out`

func planResult(t *testing.T, r api.Result) []string {
	t.Helper()
	require.True(t, r.OK(), "%+v", r.Err)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	var out []string
	require.NoError(t, json.Unmarshal(v.Result, &out))
	return out
}

func TestExecutor_Execute_planDeselectedToolIsDenied(t *testing.T) {
	w := newParkWorld(t)
	p := readPlan(t, w.ex, twoTools)
	require.False(t, p.Dynamic)
	require.Equal(t, []string{"add", "approve"}, p.Tools)
	p.Tools = []string{"add"} // the approver deselects approve
	out := planResult(t, w.ex.Execute(context.Background(), planCall(twoTools, p)))
	require.Equal(t, "add 42", out[0])
	require.Contains(t, out[1], "approve DENIED: approve is outside the approved plan "+p.Hash[:12])
	require.Equal(t, map[string]int{"add": 1}, w.ran, "nothing reaches a deselected tool")
}

func TestExecutor_Execute_planWholeRunsAsRead(t *testing.T) {
	w := newParkWorld(t)
	p := readPlan(t, w.ex, twoTools)
	out := planResult(t, w.ex.Execute(context.Background(), planCall(twoTools, p)))
	require.Equal(t, []string{"add 42", "approve the body ran"}, out)
}

func TestExecutor_Execute_planOfAnotherProgramIsRefused(t *testing.T) {
	w := newParkWorld(t)
	p := readPlan(t, w.ex, `return await tools.add({})`)
	r := w.ex.Execute(context.Background(), planCall(twoTools, p))
	require.Equal(t, api.CodeDenied, r.Err.Code)
	require.Contains(t, r.Err.Message, "the plan "+p.Hash[:12])
	require.Contains(t, r.Err.Message, plan.Hash(twoTools)[:12])
	require.Contains(t, r.Err.Message, "nothing ran")
	require.Empty(t, w.ran)
}

func TestExecutor_Execute_planRemovedSiteIsDenied(t *testing.T) {
	w := newParkWorld(t)
	code := "const a = await tools.add({})\nlet b; try { b = await tools.add({}) } catch (e: any) { b = e.code }\nreturn [String(a), String(b)]"
	p := readPlan(t, w.ex, code)
	require.Len(t, p.Calls, 2)
	p.Calls = p.Calls[:1] // the approver removes the second call
	require.Equal(t, []string{"42", "DENIED"}, planResult(t, w.ex.Execute(context.Background(), planCall(code, p))))
	require.Equal(t, map[string]int{"add": 1}, w.ran)
}

func TestExecutor_Execute_planDynamicAllowsOnlyApprovedTools(t *testing.T) {
	w := newParkWorld(t)
	code := "const t: any = tools\nconst out = [String(await t.add({}))]\ntry { await t.approve({what: 'x'}) } catch (e: any) { out.push(e.code) }\nreturn out"
	p := readPlan(t, w.ex, code)
	require.True(t, p.Dynamic)
	p.Tools = []string{"add"}
	require.Equal(t, []string{"42", "DENIED"}, planResult(t, w.ex.Execute(context.Background(), planCall(code, p))))
	require.Equal(t, map[string]int{"add": 1}, w.ran)
}

func TestExecutor_Execute_planInASessionIsRefused(t *testing.T) {
	w := newParkWorld(t)
	code := `return await tools.add({})`
	c := planCall(code, readPlan(t, w.ex, code))
	c.Session = "s"
	r := w.ex.Execute(context.Background(), c)
	require.Equal(t, api.CodeInvalidArgs, r.Err.Code)
	require.Contains(t, r.Err.Message, "cannot run in a session")
	require.Empty(t, w.ran)
}

func TestExecutor_Plan_refusals(t *testing.T) {
	w := newParkWorld(t)
	_, err := w.ex.Plan("", "return (")
	require.Equal(t, api.CodeCodeRunFailed, api.CodeOf(err))
	_, err = w.ex.Plan("nope", "return 1")
	require.Equal(t, api.CodeUnknownTool, api.CodeOf(err))
	_, err = w.ex.Plan("", string(make([]byte, executor.DefaultMaxCodeBytes+1)))
	require.Equal(t, api.CodeInvalidArgs, api.CodeOf(err))
}

// A plan-bound run parked to bytes and restored keeps its plan, with the
// calls it admitted before it parked.
func TestExecutor_RestoreParked_keepsThePlan(t *testing.T) {
	w := newParkWorld(t)
	ctx := context.Background()
	code := "const a = await tools.add({})\nconst ok = await tools.approve({what: 'deploy'})\nlet b; try { b = await tools.add({}) } catch (e: any) { b = e.code }\nreturn [String(a), ok, String(b)]"
	p := readPlan(t, w.ex, code)
	require.Len(t, p.Calls, 3)
	p.Calls = p.Calls[:2] // the last add is removed
	res, parked := w.ex.ExecuteParkable(ctx, planCall(code, p), isApprove)
	require.NotNil(t, parked, "not parked: %+v", res)
	data, err := parked.Marshal()
	require.NoError(t, err)
	require.True(t, parked.Release())
	other := newParkWorld(t) // another executor, as another node would be
	again, err := other.ex.RestoreParked(data)
	require.NoError(t, err)
	answer := executor.Answer{Output: api.Output{Value: json.RawMessage(`"yes"`)}}
	res, last := again.Resume(ctx, map[int32]executor.Answer{2: answer})
	require.Nil(t, last)
	require.Equal(t, []string{"42", "yes", "DENIED"}, planResult(t, res))
	require.Equal(t, map[string]int{"add": 1}, w.ran)
	require.Empty(t, other.ran, "the removed call was denied after the restore")
}

// A program that reaches tools by a route the reader cannot see (a
// function's constructor by a key built at run time, whose code runs in
// the global scope) finds no tools when bound to a plan: they are only
// in the scope around its own (wasmhost.Program.LexicalTools).
func TestExecutor_Execute_planCodeFromTextFindsNoTools(t *testing.T) {
	w := newParkWorld(t)
	code := `const k = ["constr", "uctor"].join("");
const F = (async () => {})[k];
const out = [String(await tools.add({}))];
for (const src of ["return tools.approve({what: 'x'})", "return tools.add({sneaky: 1})", "return tools.add({})"]) {
  try { out.push(String(await F(src)())) } catch (e: any) { out.push(e.code ?? e.name) }
}
return out`
	p := readPlan(t, w.ex, code)
	require.False(t, p.Dynamic, "the reader does not see this route: %v", p.Reasons)
	require.Equal(t, []string{"add"}, p.Tools)
	out := planResult(t, w.ex.Execute(context.Background(), planCall(code, p)))
	require.Equal(t, []string{"42", "ReferenceError", "ReferenceError", "ReferenceError"}, out)
	require.Equal(t, map[string]int{"add": 1}, w.ran)

	// Unbound, the same program makes all four calls.
	w.ran = map[string]int{}
	out = planResult(t, w.ex.Execute(context.Background(), runCodeCall(code)))
	require.Equal(t, []string{"42", "the body ran", "42", "42"}, out)
}

// A call the approved plan covers needs no approval (the plan was it); a
// deny still denies it.
func TestExecutor_Execute_planCoveredCallSkipsApprovalNotDenial(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	for _, name := range []string{"pay", "wipe"} {
		require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: name, Description: "x",
			Body: func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput(name + " ran") }}))
	}
	var asked atomic.Int64
	ex := newExecutor(t, reg, executor.NewConfig().WithRuntime(realRuntime(t)).
		WithPreExecute(func(_ context.Context, req executor.Request) (executor.Decision, error) {
			switch req.Tool {
			case "pay":
				return executor.Decision{Verdict: executor.Ask, Reason: "money"}, nil
			case "wipe":
				return executor.Decision{Verdict: executor.Deny, Reason: "never"}, nil
			}
			return executor.Decision{}, nil
		}).
		WithApprover(executor.ApproverFunc(func(context.Context, executor.Request, string) (executor.Approval, string, error) {
			asked.Add(1)
			return executor.Reject, "nobody is here", nil
		})))
	code := `const out: string[] = [];
for (const f of [() => tools.pay({}), () => tools.wipe({})]) { try { out.push(await f()) } catch (e: any) { out.push(e.code) } }
return out`
	require.Equal(t, []string{"DENIED", "DENIED"}, planResult(t, ex.Execute(context.Background(), runCodeCall(code))))
	require.Equal(t, int64(1), asked.Load(), "unbound, pay is asked about")
	p, err := ex.Plan("", code)
	require.NoError(t, err)
	require.Equal(t, []string{"pay", "wipe"}, p.Tools)
	require.Equal(t, []string{"pay ran", "DENIED"}, planResult(t, ex.Execute(context.Background(), planCall(code, p))))
	require.Equal(t, int64(1), asked.Load(), "bound, pay is not asked about again")
}

// The program's tools are in a scope around its own, so a program may
// still declare a tools of its own, bound to a plan or not (a plan of it is
// dynamic).
func TestExecutor_Execute_programMayDeclareTools(t *testing.T) {
	w := newParkWorld(t)
	code := "const tools = [1, 2]\nreturn [String(tools.length)]"
	require.Equal(t, []string{"2"}, planResult(t, w.ex.Execute(context.Background(), runCodeCall(code))))
	p := readPlan(t, w.ex, code)
	require.True(t, p.Dynamic)
	require.Equal(t, []string{"2"}, planResult(t, w.ex.Execute(context.Background(), planCall(code, p))))
}
