//go:build linux

package mcpbridge_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// runCode runs a program through run_code, model-direct, and returns the
// result.
func (v *env) runCode(t *testing.T, code string) api.Result {
	t.Helper()
	args, err := json.Marshal(map[string]string{"code": code, "description": "test program"})
	require.NoError(t, err)
	return v.call(context.Background(), registry.RunCode, string(args))
}

func TestBridge_runCode_realSandbox(t *testing.T) {
	rt := sharedRuntime(t)
	tests := []struct {
		name, code string
		want       string // the program's result, JSON
	}{
		{
			// Each call waits for the other upstream-side ("meet"), so
			// this settles only if both run at once: they are read-only,
			// hence concurrency-safe, hence overlapped by the scheduler.
			name: "two upstream tools in parallel",
			code: `const [a, b] = await Promise.all([
  tools["up.echo"]({text: "left", meet: "m1"}),
  tools["up.upper"]({text: "right", meet: "m1"}),
]);
return {a: a.text, b};`,
			want: `{"a":"left","b":"RIGHT"}`,
		},
		{
			name: "an upstream failure is a ToolCallError",
			code: `try { await tools["up.err"]({}); return "no error"; }
catch (e) { return {name: e.name, tool: e.toolName, message: e.message}; }`,
			want: `{"name":"ToolCallError","tool":"up.err","message":"disk on fire"}`,
		},
		{
			name: "a crash mid-program, then the restarted upstream",
			code: `let crash = "";
try { await tools["up.crash"]({}); } catch (e) { crash = e.message; }
const again = await tools["up.echo"]({text: "again"});
return {crash, again: again.text};`,
			want: `{"crash":"upstream \"up\" failed while running crash: it exited (exit status 3; stderr: crash: exiting on purpose); it will be restarted on the next call","again":"again"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := connect(t, upstream(), api.ModePTC, executor.NewConfig().WithRuntime(rt))
			// In ptc mode the upstream tools are reachable only from a
			// program.
			direct := v.call(context.Background(), "up.echo", `{"text":"x"}`)
			require.NotNil(t, direct.Err)
			require.Equal(t, api.CodeUnknownTool, direct.Err.Code)

			r := v.runCode(t, tt.code)
			require.Nil(t, r.Err, r.Text)
			var got executor.RunCodeValue
			require.NoError(t, json.Unmarshal(r.Value, &got))
			require.JSONEq(t, tt.want, string(got.Result))
		})
	}
}
