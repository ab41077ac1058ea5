package trace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
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
		if calls[i].EndUS != nil {
			zero := int64(0)
			calls[i].EndUS = &zero
		}
		calls[i].SettledUS = 0
	}
	rec.Calls = calls
	return rec
}

// orderedCalls returns shopTools(0) whose calls named in chain ("tool:arg",
// arg the sku or tag argument) complete in chain's order: each body waits
// for the result notification of the one before it. The executor
// configuration returned carries the hook that tells them.
func orderedCalls(t *testing.T, chain ...string) ([]registry.Tool, executor.Config) {
	t.Helper()
	notified := map[string]chan struct{}{}
	for _, k := range chain {
		notified[k] = make(chan struct{})
	}
	key := func(tool string, args json.RawMessage) string {
		var a struct{ SKU, Tag string }
		require.NoError(t, json.Unmarshal(args, &a))
		return tool + ":" + a.SKU + a.Tag
	}
	tools := shopTools(0)
	for i := range tools {
		name, body := tools[i].Name, tools[i].Body
		tools[i].Body = func(ctx context.Context, in api.Input) (api.Output, error) {
			if k := slices.Index(chain, key(name, in.Args)); k > 0 {
				select {
				case <-notified[chain[k-1]]:
				case <-ctx.Done():
					return api.Output{}, ctx.Err()
				case <-time.After(10 * time.Second):
					return api.Output{}, fmt.Errorf("%s waited 10 s for %s", chain[k], chain[k-1])
				}
			}
			return body(ctx, in)
		}
	}
	cfg := executor.NewConfig().WithOnResult(func(n executor.Notification) {
		if !n.Nested {
			return
		}
		if c, ok := notified[key(n.Tool, n.Args)]; ok {
			close(c)
		}
	})
	return tools, cfg
}

func TestRecorder_golden(t *testing.T) {
	// The three quotes complete M2, C3, K1: completion order is not
	// submission order.
	tools, cfg := orderedCalls(t, "quote:M2", "quote:C3", "quote:K1")
	h := newHarness(t, tools, cfg)
	r, rec := h.run(t, "golden", cheapestTS, 42)
	require.True(t, r.OK(), r.Text)
	completed := make([]int, len(rec.Calls))
	for i, c := range rec.Calls {
		completed[i] = c.Completed
	}
	require.Equal(t, []int{1, 4, 2, 3, 5, 6}, completed, "completion ranks follow the executor's Seq")

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
		require.NotNil(t, c.EndUS, "call %d has no body end", c.Index)
		require.GreaterOrEqual(t, *c.EndUS, *c.StartUS, "call %d ended before it started", c.Index)
		require.GreaterOrEqual(t, c.SettledUS, *c.StartUS, "call %d settled before it started", c.Index)
	}
	require.Equal(t, 6, rec.Stats.Calls)
	require.Positive(t, rec.Stats.WallUS)
	require.Equal(t, "ok", rec.Outcome)

	rep := replay(t, rec)
	require.True(t, rep.OK(), "divergence %v, differences %q", rep.Divergence, rep.Differences)
	for i, c := range rep.Record.Calls {
		require.Equal(t, completed[i], c.Completed, "replay released call %d out of the recorded order", c.Index)
	}
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
