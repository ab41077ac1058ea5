package trace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/testkit"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/trace"
	"github.com/ptcx/ptcx/workspace"
)

// copySample copies the workspace example's sample project to a temporary
// directory (refactor.ts edits it).
func copySample(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("..", "examples", "workspace", "sample")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

func workspaceTools(t *testing.T) []registry.Tool {
	t.Helper()
	ws, err := workspace.New(copySample(t), workspace.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	return ws.Tools()
}

func readExample(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "examples", path))
	require.NoError(t, err)
	return string(b)
}

// requireReplays replays rec against no tools and requires the same
// outcome, byte for byte.
func requireReplays(t *testing.T, r interface{ OK() bool }, rec trace.Record) {
	t.Helper()
	rep := replay(t, rec)
	require.Nil(t, rep.Divergence)
	require.Empty(t, rep.Differences)
	require.True(t, rep.OK())
	require.Equal(t, rec.Text, rep.Result.Text)
	require.Equal(t, r.OK(), rep.Result.OK())
	require.Equal(t, rec.Logs, rep.Record.Logs)
	require.Equal(t, string(rec.Result), string(rep.Record.Result))
	require.Equal(t, len(rec.Calls), len(rep.Record.Calls), "the replay made another number of calls")
}

func TestReplay_examples(t *testing.T) {
	tests := []struct {
		name, program string
		tools         func(t *testing.T) []registry.Tool
	}{
		{"workspace fanout", "workspace/fanout.ts", workspaceTools},
		{"workspace summarize", "workspace/summarize.ts", workspaceTools},
		{"workspace refactor", "workspace/refactor.ts", workspaceTools},
		{"shop cheapest, tools of random latency", "shop/cheapest.ts", func(*testing.T) []registry.Tool { return shopTools(20 * time.Millisecond) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.tools(t), executor.NewConfig())
			r, rec := h.run(t, "example", readExample(t, tt.program), 3)
			require.True(t, r.OK(), r.Text)
			require.NotEmpty(t, rec.Calls)
			requireReplays(t, r, rec)
		})
	}
}

// Failures replay to the same failure.
func TestReplay_failures(t *testing.T) {
	tests := []struct{ name, code string }{
		{"exception after calls", `const q = await tools.quote({sku: "K1"}); throw new Error("no " + q.sku)`},
		{"uncaught tool failure", `console.log("ordering"); await tools.order({sku: "C3"})`},
		{"caught tool failure", `try { await tools.order({sku: "C3"}) } catch (e) { return e.message }`},
		{"syntax", `return (`},
		{"compute timeout", `const p = await tools.search({}); for (;;) {}`},
		{"memory", `const a = []; await tools.search({}); for (;;) a.push("x".repeat(1 << 16) + a.length)`},
		{"output limit", `await tools.search({}); return "x".repeat(4 << 20)`},
		{"not awaited: abandoned", `tools.quote({sku: "K1"}); return Math.random()`},
		{"random and dates", `const q = await Promise.all(["K1", "M2"].map(sku => tools.quote({sku}))); return [Math.random(), Date.now(), performance.now(), q.length]`},
		{"timers around calls", `const order = []; await Promise.all([new Promise(r => setTimeout(() => { order.push("t"); r(); }, 5)), tools.search({}).then(() => order.push("s"))]); return order.length`},
		// 120 calls at once: under max_pending_calls (128). Past it, the
		// program fails while calls are in flight, and which of them the
		// failure's text names depends on the tools' latency (docs/trace.md).
		{"deep fan-out", `const r = await Promise.all(Array.from({length: 120}, (_, i) => tools.quote({sku: "K" + i}))); return r.reduce((s, q) => s + q.in_stock, 0)`},
		// Hostile programs (the kinds of tests/hostile/'s corpus a trace can hold).
		{"nested brackets, 100k", "return " + strings.Repeat("[", 100_000)},
		{"stack overflow", `const f = (n) => f(n + 1) + 1; await tools.search({}); return f(0)`},
		{"never settles", `await tools.search({}); await new Promise(() => {})`},
		{"arguments over the limit, caught", `try { await tools.quote({sku: "x".repeat(5 << 20)}) } catch (e) { return "refused: " + e.message }`},
		{"pending calls over the limit, caught", `const r = await Promise.allSettled(Array.from({length: 300}, (_, i) => tools.quote({sku: "K" + i}))); return r.filter(x => x.status === "rejected").length`},
		{"result nested deep", `await tools.search({}); let v = 1; for (let i = 0; i < 99; i++) v = [v]; return v`},
		{"a tool's error message with host-looking text", `try { await tools.order({sku: "C3"}) } catch (e) { console.error(e.message); throw e }`},
	}
	h := newHarness(t, shopTools(3*time.Millisecond), executor.NewConfig().WithLimits(limitsForFailures))
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, rec := h.run(t, "f"+string(rune('a'+i)), tt.code, 11)
			requireReplays(t, r, rec)
		})
	}
}

func TestReplay_divergence(t *testing.T) {
	h := newHarness(t, shopTools(0), executor.NewConfig())
	const code = `const a = await tools.quote({sku: "K1"}); const b = await tools.quote({sku: "M2"}); return a.price_cents + b.price_cents`
	_, rec := h.run(t, "div", code, 5)
	require.Len(t, rec.Calls, 2)

	tests := []struct {
		name   string
		code   string
		index  int
		reason string
		want   string
	}{
		{"other arguments", `const a = await tools.quote({sku: "K1"}); const b = await tools.quote({sku: "C3"}); return 0`, 2, "args",
			`replay diverged at call 2 (args): expected tools.quote({"sku":"M2"}), got tools.quote({"sku":"C3"})`},
		{"other tool", `await tools.search({sku: "K1"}); return 0`, 1, "tool",
			`replay diverged at call 1 (tool): expected tools.quote({"sku":"K1"}), got tools.search({"sku":"K1"})`},
		{"a call more", `await tools.quote({sku: "K1"}); await tools.quote({sku: "M2"}); await tools.order({sku: "K1"}); return 0`, 3, "extra call",
			`replay diverged at call 3 (extra call): expected no call, got tools.order({"sku":"K1"})`},
		{"a call fewer", `const a = await tools.quote({sku: "K1"}); return a.price_cents`, 2, "missing call",
			`replay diverged at call 2 (missing call): expected tools.quote({"sku":"M2"}), got no call (the program settled)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed := rec
			changed.Program.Code = tt.code
			rep := replay(t, changed)
			require.NotNil(t, rep.Divergence)
			require.False(t, rep.OK())
			require.Equal(t, tt.index, rep.Divergence.Index)
			require.Equal(t, tt.reason, rep.Divergence.Reason)
			require.Equal(t, tt.want, rep.Divergence.Error())
		})
	}
}

// The replay releases results in the trace's completion order: a program
// that observes the order sees the recorded one (M2 before K1, against
// submission order: K1's body waits until the program, having seen M2, has
// made a third call), and other ranks change what it sees.
func TestReplay_completionOrder(t *testing.T) {
	tools, cfg := orderedCalls(t, "search:seen-M2", "quote:K1")
	h := newHarness(t, tools, cfg)
	const code = `const seen = [];
await Promise.all([
  tools.quote({sku: "K1"}).then(q => seen.push(q.sku)),
  tools.quote({sku: "M2"}).then(async q => { seen.push(q.sku); await tools.search({tag: "seen-M2"}); }),
]);
return seen`
	r, rec := h.run(t, "order", code, 1)
	require.True(t, r.OK(), r.Text)
	require.JSONEq(t, `["M2","K1"]`, string(rec.Result))
	require.Len(t, rec.Calls, 3)
	ranks := []int{rec.Calls[0].Completed, rec.Calls[1].Completed, rec.Calls[2].Completed}
	require.Equal(t, []int{3, 1, 2}, ranks)
	requireReplays(t, r, rec)

	reordered := rec
	reordered.Calls = append([]trace.Call(nil), rec.Calls...)
	for i, k := range []int{1, 2, 3} { // K1, M2, search: submission order
		reordered.Calls[i].Completed = k
	}
	rep := replay(t, reordered)
	require.Nil(t, rep.Divergence)
	require.JSONEq(t, `["K1","M2"]`, string(rep.Record.Result))
	require.Contains(t, rep.Differences, `result: recorded ["M2","K1"], replayed ["K1","M2"]`)
}

// With the real tools, calls the trace lacks are made for real.
func TestReplay_passThrough(t *testing.T) {
	h := newHarness(t, shopTools(0), executor.NewConfig())
	_, rec := h.run(t, "what-if", `return (await tools.quote({sku: "K1"})).price_cents`, 5)
	rec.Program.Code = `const a = (await tools.quote({sku: "K1"})).price_cents; return a + (await tools.quote({sku: "M2"})).price_cents`
	rep, err := trace.Replay(t.Context(), rec, trace.ReplayConfig{Runtime: testkit.Sandbox(t), Registry: h.reg})
	require.NoError(t, err)
	require.Nil(t, rep.Divergence)
	require.True(t, rep.Result.OK(), rep.Result.Text)
	require.Equal(t, "18800", rep.Result.Text)
	require.Len(t, rep.Record.Calls, 2)

	rep = replay(t, rec)
	require.NotNil(t, rep.Divergence, "without the tools, the extra call diverges")
	require.Equal(t, "extra call", rep.Divergence.Reason)
}

func TestReplay_invalidRecord(t *testing.T) {
	rec, err := trace.Decode([]byte(minimal))
	require.NoError(t, err)
	rec.Calls[0].Completed = 7
	_, err = trace.Replay(t.Context(), rec, trace.ReplayConfig{Runtime: testkit.Sandbox(t)})
	require.ErrorContains(t, err, "record a cannot be replayed: call 1 has completion rank 7")
	_, err = trace.Replay(t.Context(), rec, trace.ReplayConfig{})
	require.ErrorContains(t, err, "needs a Runtime")
}

// Arguments run_code refused are recorded as given, and replay to the same
// refusal: rebuilt from the program alone, the last of two "code" keys
// would run.
func TestReplay_refusedArguments(t *testing.T) {
	h := newHarness(t, shopTools(0), executor.NewConfig())
	args := []byte(`{"description": "d", "code": "return 1", "code": "return 2"}`)
	r := h.exec.Execute(t.Context(), executor.Call{ID: "dup", Name: registry.RunCode, Args: args})
	require.False(t, r.OK())
	h.mu.Lock()
	require.Len(t, h.records, 1)
	rec := h.records[0]
	h.mu.Unlock()
	require.Equal(t, "INVALID_ARGS", rec.Outcome)
	require.JSONEq(t, string(args), string(rec.Program.Args))
	requireReplays(t, r, rec)

	fine, fineRec := h.run(t, "fine", `return 1`, 1)
	require.True(t, fine.OK(), fine.Text)
	require.Empty(t, fineRec.Program.Args, "arguments that were not refused are not recorded twice")
}

// A trace whose completion order the program cannot follow (call 2 is to
// complete after call 3, which the program makes only once call 2 has
// answered) fails the waiting call after GateWait, naming both calls; a
// negative GateWait is refused.
func TestReplay_gateWait(t *testing.T) {
	tools, cfg := orderedCalls(t, "search:seen-M2", "quote:K1")
	h := newHarness(t, tools, cfg)
	const code = `const seen = [];
await Promise.all([
  tools.quote({sku: "K1"}).then(q => seen.push(q.sku)),
  tools.quote({sku: "M2"}).then(async q => { seen.push(q.sku); await tools.search({tag: "seen-M2"}); }),
]);
return seen`
	r, rec := h.run(t, "gate", code, 1)
	require.True(t, r.OK(), r.Text)
	require.Len(t, rec.Calls, 3)
	impossible := rec
	impossible.Calls = append([]trace.Call(nil), rec.Calls...)
	for i, k := range []int{1, 3, 2} { // M2 after the search it leads to
		impossible.Calls[i].Completed = k
	}

	rep, err := trace.Replay(t.Context(), impossible, trace.ReplayConfig{Runtime: testkit.Sandbox(t), GateWait: 200 * time.Millisecond})
	require.NoError(t, err)
	require.False(t, rep.OK())
	require.False(t, rep.Result.OK())
	require.Contains(t, rep.Result.Text, "replay: call 2 waited 200ms for call 3, completed before it in the trace, which the program has not made")

	_, err = trace.Replay(t.Context(), rec, trace.ReplayConfig{Runtime: testkit.Sandbox(t), GateWait: -time.Second})
	require.EqualError(t, err, "trace: ReplayConfig.GateWait -1s: want a positive duration, or 0 for the default 30s")
}
