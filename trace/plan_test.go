package trace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/trace"
	"github.com/ptcx/ptcx/wasmhost"
)

// planProgram searches, quotes one product and orders it, catching a
// refusal of the order.
const planProgram = `const hits = await tools.search({tag: "ergonomic"})
const q = await tools.quote({sku: hits[0].sku})
try { await tools.order({sku: q.sku}) } catch (e: any) { return "refused: " + e.code }
return "ordered"`

// runPlanned runs code bound to p (nil: no plan) and returns its record.
func (h *harness) runPlanned(t *testing.T, id, code string, p *api.Plan) (api.Result, trace.Record) {
	t.Helper()
	args, err := json.Marshal(map[string]string{"code": code})
	require.NoError(t, err)
	r := h.exec.Execute(context.Background(), executor.Call{ID: id, Name: registry.RunCode, Args: args, World: &wasmhost.World{Seed: 1}, Plan: p})
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, rec := range h.records {
		if rec.ID == id {
			return r, rec
		}
	}
	t.Fatalf("no record of %s", id)
	return r, trace.Record{}
}

func withoutOrder(p *api.Plan) *api.Plan {
	out := *p
	out.Tools = slices.DeleteFunc(slices.Clone(p.Tools), func(s string) bool { return s == "order" })
	return &out
}

// TestRecorder_plan: a plan-bound run's record names its plan (hash, the
// tools it allows, its sites, without what the person read); it survives
// the JSON lines; a replay is bound to it as the run was, and reproduces a
// call the plan refused; a replay bound to a narrower plan reports the
// call it refuses as a divergence.
func TestRecorder_plan(t *testing.T) {
	h := newHarness(t, shopTools(0), executor.NewConfig())
	p, err := h.exec.Plan("", planProgram)
	require.NoError(t, err)
	require.NotNil(t, p.Labels, "the executor's plan is annotated")

	// Bound to a plan without order: order is refused, and the record
	// says so, naming the plan.
	r, rec := h.runPlanned(t, "planned", planProgram, withoutOrder(p))
	require.True(t, r.OK(), r.Text)
	require.Contains(t, string(rec.Result), "refused: DENIED")
	require.NotNil(t, rec.Plan)
	require.Equal(t, p.Hash, rec.Plan.Hash)
	require.Equal(t, []string{"quote", "search"}, rec.Plan.Tools)
	require.Len(t, rec.Plan.Calls, 2)
	require.Nil(t, rec.Plan.Labels)
	require.Nil(t, rec.Plan.Calls[0].Labels)
	require.Equal(t, "plan", rec.Calls[2].Error.Policy.Rule)

	var buf bytes.Buffer
	require.NoError(t, trace.Encode(&buf, rec))
	back, err := trace.Decode(bytes.TrimSpace(buf.Bytes()))
	require.NoError(t, err)
	require.Equal(t, rec.Plan, back.Plan)

	rep := replay(t, back)
	require.True(t, rep.OK(), "%v %v", rep.Divergence, rep.Differences)
	require.Equal(t, rec.Plan, rep.Record.Plan, "the replay is bound to the record's plan")

	// Without its plan the replay orders: the record's refusal is not
	// reproduced, and the replay says where.
	unbound := back
	unbound.Plan = nil
	rep = replay(t, unbound)
	require.NotNil(t, rep.Divergence)
	require.Equal(t, "policy", rep.Divergence.Reason)
	require.Equal(t, 3, rep.Divergence.Index)

	// A run made without a plan, replayed bound to a plan without order:
	// the plan refuses a call the run made, a divergence naming the rule.
	r, free := h.runPlanned(t, "free", planProgram, nil)
	require.True(t, r.OK(), r.Text)
	require.Nil(t, free.Plan)
	require.Contains(t, string(free.Result), "ordered")
	rep, err = trace.Replay(context.Background(), free, trace.ReplayConfig{Runtime: testkit.Sandbox(t), Plan: withoutOrder(p)})
	require.NoError(t, err)
	require.NotNil(t, rep.Divergence)
	require.Equal(t, "policy", rep.Divergence.Reason)
	require.Equal(t, "plan", rep.Divergence.GotPolicy.Rule)
	require.Contains(t, rep.Divergence.Error(), "refused by plan of order")

	// Replayed bound to the whole plan, it is reproduced.
	rep, err = trace.Replay(context.Background(), free, trace.ReplayConfig{Runtime: testkit.Sandbox(t), Plan: p})
	require.NoError(t, err)
	require.True(t, rep.OK(), "%v %v", rep.Divergence, rep.Differences)

	// Another program's plan: refused before it runs, recorded with the
	// plan, and replayed so.
	other, err := h.exec.Plan("", `return await tools.search({tag: "x"})`)
	require.NoError(t, err)
	r, mismatch := h.runPlanned(t, "mismatch", planProgram, other)
	require.Equal(t, api.CodeDenied, r.Err.Code)
	require.Equal(t, other.Hash, mismatch.Plan.Hash)
	rep = replay(t, mismatch)
	require.True(t, rep.OK(), "%v %v", rep.Divergence, rep.Differences)
}
