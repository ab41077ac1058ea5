package serve_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/protocol"
)

const planProgram = `const a = await tools.ask({q: "send?"});
let wrote = "no";
try { await tools.write({path: "out.txt", content: String(a)}); wrote = "yes" } catch (e: any) { wrote = e.code }
return wrote`

func TestServer_plans(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	p, err := c.Plan(ctx(t), serve.PlanRequest{Code: planProgram, ClientTools: []serve.ClientTool{askTool}})
	require.NoError(t, err)
	require.False(t, p.Dynamic)
	require.Equal(t, []string{"ask", "write"}, p.Tools)
	require.Len(t, p.Calls, 2)
	require.Equal(t, 3, p.Calls[1].Line)

	// Without the client tool, ask is not bound: no call of it.
	p2, err := c.Plan(ctx(t), serve.PlanRequest{Code: planProgram})
	require.NoError(t, err)
	require.Equal(t, []string{"write"}, p2.Tools)

	// Approved without write: the execution parks on ask, and write is
	// DENIED after the answer; nothing was written.
	p.Tools = []string{"ask"}
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: planProgram, ClientTools: []serve.ClientTool{askTool}, Plan: p})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)
	st, err = c.ToolResults(ctx(t), st.ID, serve.ToolResult{ID: st.Pending[0].ID, OK: true, Value: json.RawMessage(`"ok"`)})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status, "%+v", st.Error)
	require.JSONEq(t, `"DENIED"`, string(st.Value))

	// The plan of one program is refused for another, before it runs.
	st, err = c.Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`, Plan: p})
	require.NoError(t, err)
	require.Equal(t, serve.StatusFailed, st.Status)
	require.Equal(t, "DENIED", st.Error.Code)
	require.Contains(t, st.Error.Message, "the plan "+p.Hash[:12])

	// keep_state with a plan, a malformed hash: 400.
	_, err = c.Execute(ctx(t), serve.ExecutionRequest{Code: planProgram, Session: "s", KeepState: true, Plan: p})
	require.Equal(t, http.StatusBadRequest, apiErr(t, err).Status)
	require.Contains(t, apiErr(t, err).Body.Message, "keep_state")
	bad := *p
	bad.Hash = "x"
	_, err = c.Execute(ctx(t), serve.ExecutionRequest{Code: planProgram, Plan: &bad})
	require.Equal(t, http.StatusBadRequest, apiErr(t, err).Status)
}

func TestServer_plans_refusals(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Server.MaxBodyBytes = 4096 })
	url := ts.url + "/v1/plans"
	status, _, _ := raw(t, "POST", url, "", `{"code": "return 1"}`)
	require.Equal(t, http.StatusUnauthorized, status)
	status, _, _ = raw(t, "POST", url, "wrong-key-0000000000000", `{"code": "return 1"}`)
	require.Equal(t, http.StatusUnauthorized, status)
	for _, body := range []string{``, `{}`, `{"code": "return 1", "extra": 1}`, `{"code": "return ("}`, `{"code": "return 1", "scope": "nope"}`,
		`{"code": "return 1", "client_tools": [{"name": "run_code", "description": "x", "input_schema": {"type": "object"}}]}`,
		`{"code": "return 1", "code": "return 2"}`} {
		status, out, _ := raw(t, "POST", url, keyA, body)
		require.Equal(t, http.StatusBadRequest, status, "%s: %s", body, out)
	}
	status, out, _ := raw(t, "POST", url, keyA, `{"code": "`+strings.Repeat("x", 5000)+`"}`)
	require.Equal(t, http.StatusRequestEntityTooLarge, status, out)

	// Each tenant's plan names its own visible tools.
	status, out, _ = raw(t, "POST", url, keyA, `{"code": "const t = tools; return 1"}`)
	require.Equal(t, http.StatusOK, status, out)
	var p serve.Plan
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	require.True(t, p.Dynamic)
	require.Contains(t, p.Tools, "write")
}

// A plan-bound execution parked on a client tool keeps its plan across a
// restart with a dir store: the removed tool is still DENIED after it.
func TestServer_plans_restartKeepsThePlan(t *testing.T) {
	dir := t.TempDir()
	withDir := func(node string) func(*serve.Config) {
		return func(c *serve.Config) {
			c.Store = &serve.StoreConfig{Kind: "dir", Path: dir}
			c.Node, c.Lease = node, "1s"
		}
	}
	before := newServer(t, withDir("first"))
	c := before.client(keyA)
	p, err := c.Plan(ctx(t), serve.PlanRequest{Code: planProgram, ClientTools: []serve.ClientTool{askTool}})
	require.NoError(t, err)
	p.Tools = []string{"ask"}
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: planProgram, ClientTools: []serve.ClientTool{askTool}, Plan: p})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)
	serve.Crash(before.srv)

	after := newServer(t, withDir("second"))
	c = after.client(keyA)
	done, err := c.ToolResults(ctx(t), st.ID, serve.ToolResult{ID: st.Pending[0].ID, OK: true, Value: json.RawMessage(`"ok"`)})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"DENIED"`, string(done.Value))
}

// Reading a plan is host work for its tenant: charged to its compute, and
// refused (429 compute_seconds, Retry-After) while that is spent, as a run
// is; another tenant's bucket is its own.
func TestServer_plans_chargedToTheTenantsCompute(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Tenants[0].Quotas.ComputeSecondsPerMinute = 0.1 })
	c := ts.client(keyA)
	before := computeSeconds(t, ts, "a")
	_, err := c.Plan(ctx(t), serve.PlanRequest{Code: planProgram, ClientTools: []serve.ClientTool{askTool}})
	require.NoError(t, err, "a full bucket reads a plan")
	require.Greater(t, computeSeconds(t, ts, "a"), before, "the reading is charged")

	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `for (;;) {}`, Limits: &serve.RunLimits{TimeoutMS: 300}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusFailed, st.Status)
	_, err = c.Plan(ctx(t), serve.PlanRequest{Code: planProgram})
	e := apiErr(t, err)
	require.Equal(t, 429, e.Status)
	require.Equal(t, serve.ReasonCompute, e.Body.Reason)
	require.NotEqual(t, "", e.RetryAfter)
	require.Contains(t, e.Body.Message, "a plan is read on its compute too")
	_, err = ts.client(keyB).Plan(ctx(t), serve.PlanRequest{Code: planProgram})
	require.NoError(t, err, "another tenant's bucket is its own")
}

// TestServer_plans_labelsRulesCost: a plan reads the client tools'
// declarations with the server's: each call's label bound and what its
// tool's accepts may do, the rules, the cost bound; a client tool whose
// declaration does not read is 400.
func TestServer_plans_labelsRulesCost(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	inbox := serve.ClientTool{Name: "inbox", Description: "Read the inbox.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Labels: &protocol.Label{Integrity: "untrusted"}, Cost: 4}
	send := serve.ClientTool{Name: "send", Description: "Send.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Accepts: &protocol.Accepts{Integrity: "trusted"}, Cost: 1}
	code := "const m = await tools.inbox({})\nawait tools.send({to: m.from})"
	p, err := c.Plan(ctx(t), serve.PlanRequest{Code: code, ClientTools: []serve.ClientTool{inbox, send}})
	require.NoError(t, err)
	require.Len(t, p.Calls, 2)
	require.Equal(t, "untrusted", p.Calls[1].Labels.Integrity.String())
	require.True(t, p.Calls[1].MayDeny)
	require.False(t, p.Calls[0].MayDeny)
	require.Equal(t, int64(5), *p.Cost)
	require.Equal(t, "deny", p.Rules["send"].OnViolation)
	require.Equal(t, "untrusted", p.Labels.Integrity.String())

	// The plan document goes back as an execution's plan, annotations and
	// all; send is refused by what it accepts, as the plan said it may be
	// (a plan approves asks, never denials).
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: code, ClientTools: []serve.ClientTool{inbox, send}, Plan: p})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)
	st, err = c.ToolResults(ctx(t), st.ID, serve.ToolResult{ID: st.Pending[0].ID, OK: true, Value: json.RawMessage(`{"from": "x@example.com"}`)})
	require.NoError(t, err)
	require.Equal(t, serve.StatusFailed, st.Status)
	require.Contains(t, st.Error.Message, "send may not receive untrusted data")

	bad := send
	bad.Accepts = &protocol.Accepts{Integrity: "nope"}
	_, err = c.Plan(ctx(t), serve.PlanRequest{Code: code, ClientTools: []serve.ClientTool{inbox, bad}})
	require.Equal(t, http.StatusBadRequest, apiErr(t, err).Status)
	require.Contains(t, apiErr(t, err).Body.Message, "accepts")
}

// A plan-bound execution's call of a client tool that needs approval, which
// the plan covers, asks no person (the plan was the approval): it turns
// pending as the client's call (kind tool) and parks as one; deselected,
// it is DENIED and the client never sees it.
func TestServer_plans_coveredClientToolNeedsNoApproval(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	pay := askTool
	pay.Name, pay.NeedsApproval = "pay", true
	tools := []serve.ClientTool{pay}
	code := `try { return await tools.pay({q: "10 EUR"}) } catch (e: any) { return e.code }`
	p, err := c.Plan(ctx(t), serve.PlanRequest{Code: code, ClientTools: tools})
	require.NoError(t, err)
	require.Equal(t, []string{"pay"}, p.Tools)

	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: code, ClientTools: tools, Plan: p})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)
	require.Len(t, st.Pending, 1)
	require.Equal(t, serve.KindTool, st.Pending[0].Kind, "the client's call, no person asked")
	require.JSONEq(t, `{"q":"10 EUR"}`, string(st.Pending[0].Arguments))
	require.Eventually(t, func() bool {
		_, body, _ := raw(t, "GET", ts.url+"/metrics", "", "")
		return strings.Contains(body, `ptcx_executions_parked{tenant="a"} 1`)
	}, 10*time.Second, 10*time.Millisecond, "parked as any client call, not waiting live")
	done, err := c.ToolResults(ctx(t), st.ID, serve.ToolResult{ID: st.Pending[0].ID, OK: true, Value: json.RawMessage(`"paid"`)})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"paid"`, string(done.Value))

	p.Tools = nil // deselected
	st, err = c.Execute(ctx(t), serve.ExecutionRequest{Code: code, ClientTools: tools, Plan: p})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status, "%+v", st.Error)
	require.JSONEq(t, `"DENIED"`, string(st.Value))
	events, err := c.Events(ctx(t), st.ID, 0)
	require.NoError(t, err)
	for _, e := range events {
		require.NotEqual(t, serve.EventPending, e.Type, "a deselected call is never the client's")
		require.NotEqual(t, serve.EventApprovalPending, e.Type)
	}
}
