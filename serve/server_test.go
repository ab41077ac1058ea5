package serve_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

func TestServer_execute_completed(t *testing.T) {
	ts := newServer(t, nil)
	st, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: `console.log("hi"); const l = await tools.list({}); return 1 + 1`})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status, "%+v", st.Error)
	require.JSONEq(t, `2`, string(st.Value))
	require.Equal(t, []string{"hi"}, st.Logs)
	require.NotNil(t, st.Stats)
	require.Equal(t, 1, st.Stats.Calls)
	require.Len(t, st.Calls, 1)
	require.Equal(t, "list", st.Calls[0].Tool)
}

func TestServer_execute_failed(t *testing.T) {
	ts := newServer(t, nil)
	st, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: `throw new Error("boom")`})
	require.NoError(t, err)
	require.Equal(t, serve.StatusFailed, st.Status)
	require.NotNil(t, st.Error)
	require.Equal(t, "CODE_RUN_FAILED", st.Error.Code)
	require.Contains(t, st.Error.Message, "boom")
}

func TestServer_execute_noWaitThenPoll(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 300)); return "late"`, Wait: boolp(false)})
	require.NoError(t, err)
	require.Equal(t, serve.StatusRunning, st.Status)
	got, err := c.Get(ctx(t), st.ID, true)
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, got.Status)
	require.JSONEq(t, `"late"`, string(got.Value))
}

func TestServer_clientTool_pendingThenCompleted(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{
		Code:        `const a = await tools.ask({q: "name?"}); const b = await tools.ask({q: "age?"}); return a + ":" + b`,
		ClientTools: []serve.ClientTool{askTool},
	})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)
	require.Len(t, st.Pending, 1)
	require.Equal(t, "ask", st.Pending[0].Name)
	require.JSONEq(t, `{"q":"name?"}`, string(st.Pending[0].Arguments))
	require.NotNil(t, st.ExpiresAt)
	require.True(t, st.ExpiresAt.After(time.Now()))

	st, err = c.ToolResults(ctx(t), st.ID, serve.ToolResult{ID: st.Pending[0].ID, OK: true, Value: json.RawMessage(`"ada"`)})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status)
	require.JSONEq(t, `{"q":"age?"}`, string(st.Pending[0].Arguments))

	st, err = c.ToolResults(ctx(t), st.ID, serve.ToolResult{ID: st.Pending[0].ID, OK: true, Value: json.RawMessage(`"36"`)})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status, "%+v", st.Error)
	require.JSONEq(t, `"ada:36"`, string(st.Value))
}

func TestServer_toolResults_idempotent(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{
		Code: `const a = await tools.ask({q: "x"}); return a`, ClientTools: []serve.ClientTool{askTool},
	})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status)
	callID := st.Pending[0].ID

	unknown, err := c.ToolResults(ctx(t), st.ID, serve.ToolResult{ID: "no-such-call", OK: true, Value: json.RawMessage(`1`)})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, unknown.Status, "an unknown call id is a no-op")

	done, err := c.ToolResults(ctx(t), st.ID, serve.ToolResult{ID: callID, OK: true, Value: json.RawMessage(`1`)})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status)
	require.JSONEq(t, `1`, string(done.Value))

	again, err := c.ToolResults(ctx(t), st.ID, serve.ToolResult{ID: callID, OK: true, Value: json.RawMessage(`2`)})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, again.Status)
	require.JSONEq(t, `1`, string(again.Value), "a repeated result changes nothing")
}

func TestServer_clientTool_failedResult(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{
		Code: `try { await tools.ask({q: "x"}) } catch (e) { return e.name + ": " + e.message }`, ClientTools: []serve.ClientTool{askTool},
	})
	require.NoError(t, err)
	st, err = c.ToolResults(ctx(t), st.ID, serve.ToolResult{ID: st.Pending[0].ID, Error: &serve.ToolResultError{Message: "user refused"}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status)
	require.Contains(t, string(st.Value), "ToolCallError")
	require.Contains(t, string(st.Value), "user refused")
}

func TestServer_clientTool_expiry(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Tenants[0].Quotas.PendingTimeoutMS = 300 })
	c := ts.client(keyA)
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{
		Code: `try { await tools.ask({q: "x"}); return "answered" } catch (e) { return e.message }`, ClientTools: []serve.ClientTool{askTool},
	})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status)
	got, err := c.Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	deadline := time.Now().Add(20 * time.Second)
	for got.Status != serve.StatusCompleted && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		got, err = c.Get(ctx(t), st.ID, false)
		require.NoError(t, err)
	}
	require.Equal(t, serve.StatusCompleted, got.Status)
	require.Contains(t, string(got.Value), "expired", "the program is told its call expired")

	late, err := c.ToolResults(ctx(t), st.ID, serve.ToolResult{ID: st.Pending[0].ID, OK: true, Value: json.RawMessage(`1`)})
	require.NoError(t, err)
	require.JSONEq(t, string(got.Value), string(late.Value), "a result after expiry is a no-op")

	events, err := c.Events(ctx(t), st.ID, 0)
	require.NoError(t, err)
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	require.Contains(t, types, serve.EventExpired)
}

func TestServer_cancel(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `await tools.ask({q: "x"}); return 1`, ClientTools: []serve.ClientTool{askTool}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status)
	got, err := c.Cancel(ctx(t), st.ID)
	require.NoError(t, err)
	require.Equal(t, serve.StatusFailed, got.Status)
	require.NotNil(t, got.Error)

	_, err = c.Cancel(ctx(t), st.ID)
	require.Equal(t, 409, apiErr(t, err).Status, "cancelling a settled execution conflicts")
}

func TestServer_events_inOrderAndResumable(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{
		Code: `console.log("first"); await tools.list({}); const a = await tools.ask({q: "x"}); console.log("got " + a); return a`, ClientTools: []serve.ClientTool{askTool},
	})
	require.NoError(t, err)
	_, err = c.ToolResults(ctx(t), st.ID, serve.ToolResult{ID: st.Pending[0].ID, OK: true, Value: json.RawMessage(`"y"`)})
	require.NoError(t, err)

	all, err := c.Events(ctx(t), st.ID, 0)
	require.NoError(t, err)
	var types []string
	for i, e := range all {
		require.Equal(t, i+1, e.ID, "ids count up from 1")
		types = append(types, e.Type)
	}
	require.Equal(t, []string{
		serve.EventLog,                                  // as the program writes it, before anything it does next
		serve.EventCallStarted, serve.EventCallFinished, // list
		// ask: the program parks on it; the call starts when it resumes with the result
		serve.EventPending, serve.EventResult, serve.EventCallStarted, serve.EventCallFinished,
		serve.EventLog, serve.EventDone,
	}, types)

	require.JSONEq(t, `{"line":"first"}`, string(all[0].Data))
	require.JSONEq(t, `{"line":"got y"}`, string(all[7].Data))

	rest, err := c.Events(ctx(t), st.ID, 4)
	require.NoError(t, err)
	require.Equal(t, all[4:], rest, "Last-Event-ID resumes after that event")
}

func TestServer_idempotencyKey(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	req := serve.ExecutionRequest{Code: `return Math.random()`, IdempotencyKey: "k1"}
	first, err := c.Execute(ctx(t), req)
	require.NoError(t, err)
	second, err := c.Execute(ctx(t), req)
	require.NoError(t, err)
	require.Equal(t, first.ID, second.ID)
	require.Equal(t, string(first.Value), string(second.Value))

	req.Code = `return 2`
	_, err = c.Execute(ctx(t), req)
	require.Equal(t, 409, apiErr(t, err).Status)

	other, err := ts.client(keyB).Execute(ctx(t), serve.ExecutionRequest{Code: `return Math.random()`, IdempotencyKey: "k1"})
	require.NoError(t, err)
	require.NotEqual(t, first.ID, other.ID, "keys are per tenant")
}

func TestServer_calls_collapse(t *testing.T) {
	ts := newServer(t, nil)
	tests := []struct {
		name, key, tool string
		args            string
		ok              bool
		code            string
	}{
		{"ptc run_code", keyA, "run_code", `{"code":"return 3","description":"three"}`, true, ""},
		{"ptc direct tool refused", keyA, "list", `{}`, false, "UNKNOWN_TOOL"},
		{"native direct tool", keyN, "list", `{}`, true, ""},
		{"native run_code refused", keyN, "run_code", `{"code":"return 3","description":"three"}`, false, "UNKNOWN_TOOL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ts.client(tt.key).Call(ctx(t), tt.tool, json.RawMessage(tt.args))
			require.NoError(t, err)
			require.Equal(t, tt.ok, out.OK, "%+v", out.Error)
			if !tt.ok {
				require.Equal(t, tt.code, out.Error.Code)
			}
		})
	}
}

func TestServer_tools_and_prompt(t *testing.T) {
	ts := newServer(t, nil)
	status, body, _ := raw(t, "GET", ts.url+"/v1/tools?format=anthropic", keyA, "")
	require.Equal(t, 200, status)
	var tools struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &tools))
	require.Len(t, tools.Tools, 1)
	require.Equal(t, "run_code", tools.Tools[0].Name, "in ptc mode only run_code is advertised")

	// The OpenAI Responses API's flat function tools: the same tools as the
	// library's Host.ResponsesTools.
	status, body, _ = raw(t, "GET", ts.url+"/v1/tools?format=responses&scope=", keyN, "")
	require.Equal(t, 200, status, body)
	var flat struct {
		Tools []map[string]any `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &flat))
	require.NotEmpty(t, flat.Tools)
	for _, tool := range flat.Tools {
		require.Equal(t, "function", tool["type"])
		require.NotEmpty(t, tool["name"])
		require.Contains(t, tool, "parameters")
		require.Equal(t, false, tool["strict"])
		require.NotContains(t, tool, "function", "flat: no function wrapper")
	}
	for _, bad := range []string{"xml", "Responses", "responses%20", "openai,responses"} {
		status, body, _ = raw(t, "GET", ts.url+"/v1/tools?format="+bad, keyA, "")
		require.Equal(t, 400, status, bad)
		require.Contains(t, body, "want openai (the default), responses or anthropic")
	}

	status, body, _ = raw(t, "GET", ts.url+"/v1/prompt", keyA, "")
	require.Equal(t, 200, status)
	require.True(t, strings.Contains(body, "tools:sdk"), body)
}

func TestServer_health_and_metrics(t *testing.T) {
	ts := newServer(t, nil)
	_, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
	require.NoError(t, err)
	status, _, _ := raw(t, "GET", ts.url+"/healthz", "", "")
	require.Equal(t, 200, status)
	status, _, _ = raw(t, "GET", ts.url+"/readyz", "", "")
	require.Equal(t, 200, status)
	status, body, _ := raw(t, "GET", ts.url+"/metrics", "", "")
	require.Equal(t, 200, status)
	require.Contains(t, body, `ptcx_executions_total{outcome="completed",tenant="a"} 1`)
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// The service's own, and the standard collectors' (ops_test.go).
		ok := strings.HasPrefix(line, "ptcx_") || strings.HasPrefix(line, "process_") || strings.HasPrefix(line, "go_")
		require.True(t, ok, "metric %q is neither the service's (ptcx_) nor process_* or go_*", line)
	}
}

// A log event carries a line up to 2,048 bytes whole; a longer one is cut
// at a character boundary and says so. The result's logs keep it whole.
func TestServer_events_logLineCut(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{
		Code: `console.log("a".repeat(2047)); console.log("b".repeat(2048)); console.log("c".repeat(2049)); console.log("d".repeat(2047) + "é"); return 1`,
	})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status)
	events, err := c.Events(ctx(t), st.ID, 0)
	require.NoError(t, err)
	type logData struct {
		Line      string `json:"line"`
		Truncated bool   `json:"truncated"`
	}
	var got []logData
	for _, e := range events {
		if e.Type == serve.EventLog {
			var l logData
			require.NoError(t, json.Unmarshal(e.Data, &l))
			got = append(got, l)
		}
	}
	require.Len(t, got, 4)
	for i, tt := range []struct {
		n         int
		truncated bool
	}{
		{2047, false}, // below
		{2048, false}, // at
		{2048, true},  // past: cut to the bound
		{2047, true},  // past, the bound inside "é": cut before it
	} {
		require.Len(t, got[i].Line, tt.n, "line %d", i+1)
		require.Equal(t, tt.truncated, got[i].Truncated, "line %d", i+1)
	}
	require.Contains(t, st.Logs, strings.Repeat("c", 2049), "the result's logs keep the line whole")
}
