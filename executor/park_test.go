package executor_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// parkWorld is a ptc registry with a tool that answers later (approve,
// whose own body must never run: the host answers it) and an ordinary one
// (add), with an executor on the real sandbox that records every result
// notification.
type parkWorld struct {
	ex    *executor.Executor
	mu    sync.Mutex
	notes []executor.Notification
	ran   map[string]int
}

func newParkWorld(t *testing.T) *parkWorld {
	t.Helper()
	return newParkWorldOn(t, realRuntime(t))
}

// newParkWorldOn is newParkWorld on the code runtime rt.
func newParkWorldOn(t *testing.T, rt *wasmhost.Runtime) *parkWorld {
	t.Helper()
	return newParkWorldWith(t, executor.NewConfig().WithRuntime(rt))
}

// newParkWorldWith is newParkWorld on the executor configuration cfg.
func newParkWorldWith(t *testing.T, cfg executor.Config) *parkWorld {
	t.Helper()
	w := &parkWorld{ran: map[string]int{}}
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	body := func(name string, v any) registry.Body {
		return func(context.Context, api.Input) (api.Output, error) {
			w.mu.Lock()
			w.ran[name]++
			w.mu.Unlock()
			return api.ValueOutput(v)
		}
	}
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "approve", Description: "Ask a human.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"what":{"type":"string"}},"required":["what"]}`),
		Body:        body("approve", "the body ran")}))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "add", Description: "Add.", ConcurrencySafe: true,
		Body: body("add", 42)}))
	ex, err := executor.New(reg, cfg.WithOnResult(func(n executor.Notification) {
		w.mu.Lock()
		w.notes = append(w.notes, n)
		w.mu.Unlock()
	}))
	require.NoError(t, err)
	w.ex = ex
	return w
}

func (w *parkWorld) notified() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, n := range w.notes {
		s := n.Request.Tool
		if n.Request.Nested {
			s = "nested " + s
		}
		if n.Result.Err != nil {
			s += " " + string(n.Result.Err.Code)
		}
		out = append(out, s)
	}
	return out
}

func isApprove(tool string) bool { return tool == "approve" }

func runCodeCall(code string) executor.Call {
	args, _ := json.Marshal(map[string]string{"code": code, "description": "test"})
	return executor.Call{Name: "run_code", Args: args}
}

func TestExecutor_ExecuteParkable_parksAndResumes(t *testing.T) {
	w := newParkWorld(t)
	ctx := context.Background()
	res, parked := w.ex.ExecuteParkable(ctx, runCodeCall(`
		const before = await tools.add({});
		console.log("asking");
		const ok = await tools.approve({what: "deploy"});
		const after = await tools.add({});
		return {before, ok, after};`), isApprove)
	require.NotNil(t, parked, "not parked: %+v", res)
	require.Equal(t, api.Result{}, res)
	require.Equal(t, []executor.ParkedCall{{ID: 2, Tool: "approve", Args: json.RawMessage(`{"what":"deploy"}`), Kind: executor.ParkedTool}}, parked.Calls())
	require.NotEmpty(t, parked.Bytes())
	require.Equal(t, []string{"nested add"}, w.notified(), "the execution is not finished while parked")
	tok := executor.TokenOfParked(parked)
	require.True(t, tok.Live(), "the token lives while the execution is parked")

	answer := executor.Answer{Output: api.Output{Value: json.RawMessage(`"approved by a human"`)}}
	res, again := parked.Resume(ctx, map[int32]executor.Answer{2: answer})
	require.Nil(t, again)
	require.True(t, res.OK(), "%+v", res.Err)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(res.Value, &v))
	require.Equal(t, []string{"asking"}, v.Logs)
	require.JSONEq(t, `{"before": 42, "ok": "approved by a human", "after": 42}`, string(v.Result))
	// The parked call and the one after it went through the phases as
	// nested calls of the same execution (in ptc mode a model-direct add
	// would be refused), and approve's own body never ran.
	require.Equal(t, []string{"nested add", "nested approve", "nested add", "run_code"}, w.notified())
	var seqs []int64
	for _, n := range w.notes[:3] {
		seqs = append(seqs, n.Seq)
	}
	require.Equal(t, []int64{1, 2, 3}, seqs, "completion numbers go on across the resume (a trace ranks calls by them)")
	require.Equal(t, map[string]int{"add": 2}, w.ran)
	require.Len(t, res.Ledger.Calls, 3)
	require.False(t, tok.Live(), "the token dies with its execution")

	res, _ = parked.Resume(ctx, nil)
	require.Equal(t, api.CodeInternal, res.Err.Code)
	require.Contains(t, res.Err.Message, "already resumed")
}

func TestExecutor_ExecuteParkable_parksAgainAndDiscards(t *testing.T) {
	w := newParkWorld(t)
	ctx := context.Background()
	_, parked := w.ex.ExecuteParkable(ctx, runCodeCall(`
		const a = await tools.approve({what: "one"});
		const b = await tools.approve({what: "two"});
		return [a, b];`), isApprove)
	require.NotNil(t, parked)
	require.Equal(t, int32(1), parked.Calls()[0].ID)
	_, again := parked.Resume(ctx, map[int32]executor.Answer{1: {Output: api.Output{Value: json.RawMessage(`1`)}}})
	require.NotNil(t, again, "the second approval parks it again")
	require.Equal(t, []executor.ParkedCall{{ID: 2, Tool: "approve", Args: json.RawMessage(`{"what":"two"}`), Kind: executor.ParkedTool}}, again.Calls())
	tok := executor.TokenOfParked(again)
	require.True(t, tok.Live())

	res := again.Discard(ctx)
	require.Equal(t, api.CodeCodeRunFailed, res.Err.Code)
	require.Equal(t, api.KindAbort, res.Err.Kind)
	require.False(t, tok.Live())
	require.Equal(t, []string{"nested approve", "run_code CODE_RUN_FAILED"}, w.notified())
	require.Empty(t, w.ran, "approve's body never ran")
}

// A parked execution's bytes go to the code runtime when it resumes, is
// discarded or is released (wasmhost.Resumption.Recycle,
// RecycleSnapshot): a program parked again, or another one parked next,
// writes its snapshot into them.
func TestExecutor_ExecuteParkable_recyclesItsBytes(t *testing.T) {
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, wasmhost.NewConfig())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(ctx)) })
	w := newParkWorldOn(t, rt)
	js := `
		globalThis.keep = "x".repeat(200000);
		const a = await tools.approve({what: "one"});
		const b = await tools.approve({what: "two"});
		return [a, b, keep.length];`
	_, parked := w.ex.ExecuteParkable(ctx, runCodeCall(js), isApprove)
	require.NotNil(t, parked)
	first := executor.SnapshotOfParked(parked)
	_, again := parked.Resume(ctx, map[int32]executor.Answer{1: {Output: api.Output{Value: json.RawMessage(`1`)}}})
	require.NotNil(t, again)
	require.Nil(t, executor.SnapshotOfParked(parked), "given to the code runtime as the run started")
	second := executor.SnapshotOfParked(again)
	require.Same(t, &first[:1][0], &second[:1][0], "parked again into the bytes it resumed from")
	require.Equal(t, len(second), cap(second), "clipped")

	require.True(t, again.Release())
	require.Nil(t, executor.SnapshotOfParked(again), "released: recycled")
	_, other := w.ex.ExecuteParkable(ctx, runCodeCall(js), isApprove)
	require.NotNil(t, other)
	require.Same(t, &first[:1][0], &executor.SnapshotOfParked(other)[:1][0], "another execution parks into them")
	res := other.Discard(ctx)
	require.Equal(t, api.CodeCodeRunFailed, res.Err.Code)
	require.Nil(t, executor.SnapshotOfParked(other), "discarded: recycled")
}

// Bytes handed out (Parked.Bytes) are the caller's for good: a program
// parked again writes elsewhere, and they are never recycled.
func TestExecutor_ExecuteParkable_bytesHandedOutStay(t *testing.T) {
	w := newParkWorld(t)
	ctx := context.Background()
	_, parked := w.ex.ExecuteParkable(ctx, runCodeCall(`
		globalThis.keep = "x".repeat(200000);
		const a = await tools.approve({what: "one"});
		keep = "";
		const b = await tools.approve({what: "two"});
		return [a, b, keep.length];`), isApprove)
	require.NotNil(t, parked)
	first := parked.Bytes()
	kept := append([]byte(nil), first...)
	_, again := parked.Resume(ctx, map[int32]executor.Answer{1: {Output: api.Output{Value: json.RawMessage(`1`)}}})
	require.NotNil(t, again)
	second := again.Bytes()
	require.NotSame(t, &first[:1][0], &second[:1][0], "not written into the bytes handed out")
	require.Equal(t, kept, first, "the bytes handed out are unchanged")
	res, last := again.Resume(ctx, map[int32]executor.Answer{2: {Output: api.Output{Value: json.RawMessage(`2`)}}})
	require.Nil(t, last)
	require.True(t, res.OK(), "%+v", res.Err)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(res.Value, &v))
	require.JSONEq(t, `[1, 2, 0]`, string(v.Result))
	require.Equal(t, kept, first, "nor recycled once the execution ended")
}

func TestExecutor_ExecuteParkable_unparkedRunsAsExecute(t *testing.T) {
	w := newParkWorld(t)
	ctx := context.Background()
	// approve beside another call is not waited on alone: its body runs.
	res, parked := w.ex.ExecuteParkable(ctx, runCodeCall(`return await Promise.all([tools.approve({what: "x"}), tools.add({})]);`), isApprove)
	require.Nil(t, parked)
	require.True(t, res.OK(), "%+v", res.Err)
	require.Equal(t, map[string]int{"add": 1, "approve": 1}, w.ran)

	res, parked = w.ex.ExecuteParkable(ctx, executor.Call{Name: "add", Args: json.RawMessage(`{}`)}, isApprove)
	require.Nil(t, parked)
	require.Equal(t, api.CodeUnknownTool, res.Err.Code, "the collapse holds for a model-direct call")

	_, parked = w.ex.ExecuteParkable(ctx, runCodeCall(`return await tools.approve({what: "y"});`), isApprove)
	require.NotNil(t, parked)
	res, _ = parked.Resume(ctx, map[int32]executor.Answer{9: {}})
	require.Equal(t, api.CodeInternal, res.Err.Code)
	require.Contains(t, res.Err.Message, "does not wait on")
	require.False(t, executor.TokenOfParked(parked).Live())

	// An unanswered parked call is dispatched to its tool when resumed.
	_, parked = w.ex.ExecuteParkable(ctx, runCodeCall(`return await tools.approve({what: "z"});`), isApprove)
	require.NotNil(t, parked)
	res, again := parked.Resume(ctx, nil)
	require.Nil(t, again, "an unanswered call is dispatched, not parked again")
	require.True(t, res.OK(), "%+v", res.Err)
	require.Equal(t, 2, w.ran["approve"])
}
