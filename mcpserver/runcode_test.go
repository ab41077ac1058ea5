package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpserver"
	"github.com/ptcx/ptcx/registry"
)

// runCodeArgs returns run_code's arguments for a program.
func runCodeArgs(t *testing.T, code string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"code": code, "description": "test program"})
	require.NoError(t, err)
	return string(b)
}

func TestServer_runCode_realSandbox(t *testing.T) {
	rt := sharedRuntime(t)
	tests := []struct {
		name, scope, code string
		wantText          string
		wantValue         string // run_code's structured value
		wantWrites        int64
	}{
		{
			name:  "two tools",
			scope: "ptc",
			code: `const s = await tools.add({x: 2, y: 3});
const g = await tools.greet({name: "Ada"});
console.log("sum", s.sum);
return {sum: s.sum, greeting: g};`,
			wantText:  "sum 5\nResult:\n{\n  \"sum\": 5,\n  \"greeting\": \"hello, Ada\"\n}",
			wantValue: `{"logs":["sum 5"],"result":{"sum":5,"greeting":"hello, Ada"}}`,
		},
		{
			name:  "two tools in parallel",
			scope: "both",
			code: `const [a, b] = await Promise.all([tools.add({x: 1, y: 1}), tools.add({x: 2, y: 2})]);
return a.sum + b.sum;`,
			wantText:  "6",
			wantValue: `{"logs":[],"result":6}`,
		},
		{
			// The collapse binds model-direct calls only: from a program,
			// write runs in ptc mode too.
			name:       "collapsed tool from a program",
			scope:      "ptc",
			code:       `const r = await tools.write({path: "a.txt", content: "hi"}); return r.ok;`,
			wantText:   "true",
			wantValue:  `{"logs":[],"result":true}`,
			wantWrites: 1,
		},
		{
			name:  "nested validation reaches the program",
			scope: "ptc",
			code: `try { await tools.add({x: "1"}); return "no error"; }
catch (e) { return e.name + ": " + e.message; }`,
			wantText: "ToolCallError: invalid arguments for add: arguments do not match the schema:",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, executor.NewConfig().WithRuntime(rt))
			cs := connect(t, f.exec, tt.scope, "")
			res := callTool(t, cs, registry.RunCode, runCodeArgs(t, tt.code))
			require.False(t, res.IsError, text(t, res))
			require.True(t, strings.HasPrefix(text(t, res), tt.wantText), text(t, res))
			if tt.wantValue != "" {
				require.Equal(t, tt.wantText, text(t, res))
				b, err := json.Marshal(res.StructuredContent)
				require.NoError(t, err)
				require.JSONEq(t, tt.wantValue, string(b))
			}
			require.Equal(t, tt.wantWrites, f.writes.Load())
		})
	}
}

func TestServer_runCode_failure(t *testing.T) {
	rt := sharedRuntime(t)
	f := newFixture(t, executor.NewConfig().WithRuntime(rt))
	cs := connect(t, f.exec, "ptc", "")
	tests := []struct {
		name, args string
		wantPrefix string
		wantCode   api.Code
		wantKind   api.Kind
	}{
		{"exception", runCodeArgs(t, `console.log("before"); throw new Error("boom");`),
			"CODE_RUN_FAILED (exception): ", api.CodeCodeRunFailed, "exception"},
		{"syntax", runCodeArgs(t, `return (;`),
			"CODE_RUN_FAILED (syntax): ", api.CodeCodeRunFailed, "syntax"},
		{"missing code", `{"description":"d"}`,
			"INVALID_ARGS: invalid arguments for run_code", api.CodeInvalidArgs, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callTool(t, cs, registry.RunCode, tt.args)
			require.True(t, res.IsError)
			got := text(t, res)
			require.True(t, strings.HasPrefix(got, tt.wantPrefix), got)
			m := errorMeta(t, res)
			require.Equal(t, tt.wantCode, m.Code)
			require.Equal(t, tt.wantKind, m.Kind)
			require.Equal(t, 1, strings.Count(got, string(tt.wantCode)), "the code is said once: %s", got)
			if tt.wantKind != "" {
				require.Equal(t, 1, strings.Count(got, "("+string(tt.wantKind)+")"), "the kind is said once: %s", got)
			}
			switch tt.name {
			case "exception":
				require.Contains(t, got, "boom")
				require.Contains(t, got, "before")
				require.Contains(t, m.Stack, "<program>:1:", "the stack is data in _meta")
			case "syntax":
				require.Equal(t, &api.Location{Line: 1, Column: 9, LineText: "return (;"}, m.Location, "the location is data in _meta")
			}
		})
	}
}

// A run_code result carries its ledger under _meta["ptcx/ledger"], failed
// or not: the nested calls made (a failure's too) and the run's stats.
func TestServer_runCode_ledgerInMeta(t *testing.T) {
	rt := sharedRuntime(t)
	f := newFixture(t, executor.NewConfig().WithRuntime(rt))
	cs := connect(t, f.exec, "ptc", "")
	ledgerOf := func(res *mcp.CallToolResult) api.Ledger {
		raw, err := json.Marshal(res.Meta[mcpserver.MetaLedger])
		require.NoError(t, err)
		var l api.Ledger
		require.NoError(t, json.Unmarshal(raw, &l))
		return l
	}
	ok := callTool(t, cs, registry.RunCode, runCodeArgs(t, `return (await tools.add({x: 1, y: 2})).sum`))
	require.False(t, ok.IsError, text(t, ok))
	l := ledgerOf(ok)
	require.Len(t, l.Calls, 1)
	require.Equal(t, "add", l.Calls[0].Tool)
	require.Empty(t, l.Calls[0].Code)
	require.Equal(t, 1, l.Stats.Calls)

	failed := callTool(t, cs, registry.RunCode, runCodeArgs(t, `await tools.add({x: 1, y: 2}); throw new Error("after a call")`))
	require.True(t, failed.IsError)
	l = ledgerOf(failed)
	require.Len(t, l.Calls, 1, "the call made before the failure")
	require.Equal(t, "add", l.Calls[0].Tool)
	require.Contains(t, text(t, failed), "add(")
}
