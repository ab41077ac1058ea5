package trace_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/trace"
)

var update = flag.Bool("update", false, "rewrite the golden trace")

const cheapestTS = `const hits = await tools.search({ tag: "ergonomic" });
console.log("found " + hits.length + " products");
const quotes = await Promise.all(hits.map((h) => tools.quote({ sku: h.sku })));
const inStock = quotes.filter((q) => q.in_stock > 0).sort((a, b) => a.price_cents - b.price_cents);
let failed = "";
try { await tools.order({ sku: "C3" }); } catch (e) { failed = e.message; }
const order = await tools.order({ sku: inStock[0].sku });
return { ordered: order.order_id, failed, lucky: Math.floor(Math.random() * 1000), at: new Date().toISOString() };`

// normalized zeroes what changes from run to run: times.
func normalized(rec trace.Record) trace.Record {
	rec.Stats = &trace.Stats{Calls: rec.Stats.Calls, MemoryBytes: rec.Stats.MemoryBytes}
	calls := append([]trace.Call(nil), rec.Calls...)
	for i := range calls {
		if calls[i].StartUS != nil {
			zero := int64(0)
			calls[i].StartUS = &zero
		}
		calls[i].EndUS, calls[i].SettledUS = nil, 0
	}
	rec.Calls = calls
	return rec
}

func TestRecorder_golden(t *testing.T) {
	h := newHarness(t, shopTools(0), executor.NewConfig())
	r, rec := h.run(t, "golden", cheapestTS, 42)
	require.True(t, r.OK(), r.Text)

	var b bytes.Buffer
	require.NoError(t, trace.Encode(&b, normalized(rec)))
	golden := filepath.Join("testdata", "golden.jsonl")
	if *update {
		require.NoError(t, os.WriteFile(golden, b.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -update to create it")
	require.Equal(t, string(want), b.String())

	require.Equal(t, trace.Version, rec.Version)
	require.Equal(t, trace.Hash(cheapestTS), rec.Program.SHA256)
	require.Len(t, rec.Calls, 6)
	require.Equal(t, "golden:ptc:5", rec.Calls[4].ID)
	require.Equal(t, "golden", rec.Calls[4].Parent)
	require.False(t, rec.Calls[4].OK)
	require.Equal(t, "TOOL_FAILED", string(rec.Calls[4].Error.Code))
	for _, c := range rec.Calls {
		require.NotNil(t, c.StartUS, "call %d has no body start", c.Index)
		require.GreaterOrEqual(t, c.SettledUS, *c.StartUS, "call %d settled before it started", c.Index)
	}
	require.Equal(t, 6, rec.Stats.Calls)
	require.Positive(t, rec.Stats.WallUS)
	require.Equal(t, "ok", rec.Outcome)
}

func TestRecorder_failures(t *testing.T) {
	h := newHarness(t, shopTools(0), executor.NewConfig())
	tests := []struct {
		name, code, outcome, text string
	}{
		{"exception", `console.log("before"); throw new Error("boom")`, "exception", "boom"},
		{"syntax", `return (`, "syntax", "line 1"},
		{"uncaught tool failure", `await tools.order({sku: "C3"})`, "exception", "out of stock"},
		{"invalid output", `return 1n`, "invalid-output", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, rec := h.run(t, "fail-"+strings.ReplaceAll(tt.name, " ", "-"), tt.code, 1)
			require.False(t, r.OK())
			require.Equal(t, tt.outcome, rec.Outcome)
			require.Equal(t, r.Text, rec.Text)
			require.Contains(t, rec.Error.Message, tt.text)
			require.Equal(t, string(r.Err.Code), string(rec.Error.Code))
		})
	}
}

func TestRecorder_WithRedact(t *testing.T) {
	h := newRedactingHarness(t, shopTools(0), executor.NewConfig(), func(r *trace.Record) {
		for i := range r.Calls {
			r.Calls[i].Args = json.RawMessage(`"[redacted]"`)
			r.Calls[i].Value = nil
		}
		r.Program.Code = "[redacted]"
	})
	const code = `return (await tools.quote({sku: "K1"})).price_cents`
	r, rec := h.run(t, "redact", code, 1)
	require.True(t, r.OK(), r.Text)
	require.Equal(t, "[redacted]", rec.Program.Code)
	require.Equal(t, trace.Hash(code), rec.Program.SHA256, "the hash is of the program as run")
	require.Len(t, rec.Calls, 1)
	require.JSONEq(t, `"[redacted]"`, string(rec.Calls[0].Args))
	require.Nil(t, rec.Calls[0].Value)
	require.JSONEq(t, `12900`, string(rec.Result), "what the redactor left is recorded")
}
