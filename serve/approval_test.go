package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
)

// approvalTools writes a tools file: fetch (its results untrusted) and
// send, which accepts trusted data only and asks otherwise
// (on_violation "ask"); send appends its arguments to out.
func approvalTools(t testing.TB, out string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tools.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"tools": [
		{"name": "fetch", "description": "Fetch mail.", "input_schema": {"type": "object"},
		 "command": ["sh", "-c", "cat >/dev/null; echo '\"mail\"'"], "labels": {"integrity": "untrusted"}},
		{"name": "send", "description": "Send.", "input_schema": {"type": "object"},
		 "command": ["sh", "-c", "line=$(cat); printf '%s\\n' \"$line\" >> \"$OUT\"; echo '\"sent\"'"],
		 "env": {"set": {"OUT": `+quoteJSON(out)+`}},
		 "accepts": {"args": {"to": {"integrity": "trusted"}}, "on_violation": "ask"}}
	]}`), 0o600))
	return path
}

// askingProgram reads untrusted mail, then sends to it: send asks.
const askingProgram = `const m = await tools.fetch({});
try { return await tools.send({to: m}) } catch (e) { return e.code + ": " + e.message }`

type approvalServer struct {
	*testServer
	out string
}

func newApprovalServer(t *testing.T, edit func(*serve.Config)) approvalServer {
	t.Helper()
	out := filepath.Join(t.TempDir(), "sent")
	tools := approvalTools(t, out)
	ts := newServer(t, func(c *serve.Config) {
		c.Tools = tools
		if edit != nil {
			edit(c)
		}
	})
	return approvalServer{testServer: ts, out: out}
}

// approvalPendingOn starts code and waits until it is pending on one
// approval.
func approvalPendingOn(t *testing.T, c *client.Client, code string) *serve.ExecutionState {
	t.Helper()
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: code})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)
	require.Len(t, st.Pending, 1)
	return st
}

func TestServer_approvals_approveAndDecline(t *testing.T) {
	ts := newApprovalServer(t, nil)
	c := ts.client(keyA)

	st := approvalPendingOn(t, c, askingProgram)
	p := st.Pending[0]
	require.Equal(t, serve.KindApproval, p.Kind)
	require.Equal(t, "send", p.Name)
	require.JSONEq(t, `{"to":"mail"}`, string(p.Arguments))
	require.Contains(t, p.Reason, `send may not receive untrusted data in argument "to"`)
	require.NotNil(t, p.Labels)
	require.Equal(t, "untrusted", p.Labels.Integrity.String())
	require.Empty(t, effects(t, ts.out), "nothing is sent before the decision")

	done, err := c.Decide(ctx(t), st.ID, serve.Decision{ID: p.ID, Approve: true, Reason: "looks fine"})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"sent"`, string(done.Value))
	require.Equal(t, []string{`{"to":"mail"}`}, effects(t, ts.out))

	// Declined: the reason reaches the program as DENIED.
	st = approvalPendingOn(t, c, askingProgram)
	done, err = c.Decide(ctx(t), st.ID, serve.Decision{ID: st.Pending[0].ID, Reason: "not to strangers"})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"DENIED: rejected by the approver: not to strangers"`, string(done.Value))
	require.Len(t, effects(t, ts.out), 1, "a declined call never runs")

	events, err := c.Events(ctx(t), st.ID, 0)
	require.NoError(t, err)
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	require.Contains(t, types, serve.EventApprovalPending)
	require.NotContains(t, types, serve.EventPending, "an approval is not a client tool's call")
}

func TestServer_approvals_idempotencyConflictsAndKinds(t *testing.T) {
	ts := newApprovalServer(t, nil)
	c := ts.client(keyA)
	st := approvalPendingOn(t, c, `const m = await tools.fetch({});
		const a = await tools.send({to: m, n: 1});
		const b = await tools.send({to: m, n: 2});
		return [a, b]`)
	first := st.Pending[0].ID
	mid, err := c.Decide(ctx(t), st.ID, serve.Decision{ID: first, Approve: true})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	second := mid.Pending[0].ID
	require.NotEqual(t, first, second)

	// The same decision again: a no-op, the state answered.
	again, err := c.Decide(ctx(t), st.ID, serve.Decision{ID: first, Approve: true})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, again.Status)
	// Another decision for it: 409.
	_, err = c.Decide(ctx(t), st.ID, serve.Decision{ID: first, Reason: "changed my mind"})
	e := apiErr(t, err)
	require.Equal(t, http.StatusConflict, e.Status, "%+v", e.Body)
	require.Contains(t, e.Body.Message, "decided already")
	// An approval posted as a tool result, decided or pending: 400.
	for _, id := range []string{first, second} {
		_, err = c.ToolResults(ctx(t), st.ID, answer(id, "x"))
		e = apiErr(t, err)
		require.Equal(t, http.StatusBadRequest, e.Status, "%+v", e.Body)
		require.Contains(t, e.Body.Message, "/approvals")
	}
	// An id it never asked about: 400, nothing applied (all or none).
	_, err = c.Decide(ctx(t), st.ID, serve.Decision{ID: second, Approve: true}, serve.Decision{ID: "nope"})
	e = apiErr(t, err)
	require.Equal(t, http.StatusBadRequest, e.Status, "%+v", e.Body)
	got, err := c.Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, got.Status)
	require.Len(t, got.Pending, 1, "nothing applied")
	// Bad bodies: 400.
	for _, body := range []string{`{}`, `{"decisions": []}`, `{"decisions": [{"approve": true}]}`,
		`{"decisions": [{"id": "a"}, {"id": "a"}]}`, `{"decisions": [{"id": "a", "extra": 1}]}`,
		`{"decisions": [{"id": "a", "reason": "` + strings.Repeat("x", 5000) + `"}]}`} {
		code, resp, _ := raw(t, "POST", ts.url+"/v1/executions/"+st.ID+"/approvals", keyA, body)
		require.Equal(t, http.StatusBadRequest, code, "%s: %s", body[:min(len(body), 60)], resp)
	}
	// Another tenant: 404, for its decisions as for its state.
	_, err = ts.client(keyB).Decide(ctx(t), st.ID, serve.Decision{ID: second, Approve: true})
	e = apiErr(t, err)
	require.Equal(t, http.StatusNotFound, e.Status)

	done, err := c.Decide(ctx(t), st.ID, serve.Decision{ID: second, Approve: true})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `["sent", "sent"]`, string(done.Value))
	// Decided before it settled: the same decision stays a no-op.
	_, err = c.Decide(ctx(t), st.ID, serve.Decision{ID: second, Approve: true})
	require.NoError(t, err)
}

// A client tool's call answered on /approvals is 400 too.
func TestServer_approvals_toolCallIsNotAnApproval(t *testing.T) {
	ts := newApprovalServer(t, nil)
	c := ts.client(keyA)
	st := pendingOn(t, c, `return await tools.ask({q: "x"})`)
	require.Equal(t, serve.KindTool, st.Pending[0].Kind)
	_, err := c.Decide(ctx(t), st.ID, serve.Decision{ID: st.Pending[0].ID, Approve: true})
	e := apiErr(t, err)
	require.Equal(t, http.StatusBadRequest, e.Status)
	require.Contains(t, e.Body.Message, "tool_results")
}

func TestServer_approvals_timeoutDeclines(t *testing.T) {
	ts := newApprovalServer(t, func(c *serve.Config) { c.Tenants[0].Quotas.ApprovalTimeoutMS = 300 })
	c := ts.client(keyA)
	st := approvalPendingOn(t, c, askingProgram)
	require.NotNil(t, st.ExpiresAt)
	require.Eventually(t, func() bool {
		g, err := c.Get(ctx(t), st.ID, false)
		return err == nil && g.Status == serve.StatusCompleted
	}, 20*time.Second, 20*time.Millisecond)
	got, err := c.Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	require.Contains(t, string(got.Value), "DENIED: rejected by the approver: no decision came before the approval expired")
	require.Empty(t, effects(t, ts.out))
	_, err = c.Decide(ctx(t), st.ID, serve.Decision{ID: st.Pending[0].ID, Approve: true})
	e := apiErr(t, err)
	require.Equal(t, http.StatusConflict, e.Status, "declined at its timeout: a decision stands")
}

func TestServer_approvals_configValidated(t *testing.T) {
	for ms, want := range map[int64]string{-1: "negative", serve.MaxApprovalTimeout.Milliseconds() + 1: "over the maximum", 1: "", serve.MaxApprovalTimeout.Milliseconds(): ""} {
		data := `{"listen": "127.0.0.1:0", "tenants": [{"name": "a", "key_sha256": "` + sum(keyA) + `", "quotas": {"approval_timeout_ms": ` + strconv.FormatInt(ms, 10) + `}}]}`
		_, err := serve.ParseConfig([]byte(data))
		if want == "" {
			require.NoError(t, err, "%d", ms)
			continue
		}
		require.ErrorContains(t, err, "approval_timeout_ms")
		require.ErrorContains(t, err, want)
	}
}

// An execution whose program may ask counts against max_pending, as one
// with client tools does.
func TestServer_approvals_countAgainstMaxPending(t *testing.T) {
	ts := newApprovalServer(t, func(c *serve.Config) { c.Tenants[0].Quotas = serve.Quotas{MaxConcurrent: 8, MaxPending: 2} })
	c := ts.client(keyA)
	approvalPendingOn(t, c, askingProgram)
	approvalPendingOn(t, c, askingProgram)
	_, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: askingProgram})
	e := apiErr(t, err)
	require.Equal(t, http.StatusTooManyRequests, e.Status)
	require.Equal(t, serve.ReasonMaxPending, e.Body.Reason)
}

// /v1/calls and /mcp cannot wait for a person: DENIED, naming
// /v1/executions.
func TestServer_approvals_callsAndMCPDenied(t *testing.T) {
	ts := newApprovalServer(t, nil)
	c := ts.client(keyA)
	args, _ := json.Marshal(map[string]string{"code": askingProgram, "description": "send"})
	res, err := c.Call(ctx(t), "run_code", args)
	require.NoError(t, err)
	require.True(t, res.OK, "%+v", res.Error)
	require.Contains(t, res.Text, "DENIED: approval required, and this call cannot wait for one here")
	require.Contains(t, res.Text, "POST /v1/executions")
	require.Empty(t, effects(t, ts.out))

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code","arguments":` + string(args) + `}}`
	req, err := http.NewRequest("POST", ts.url+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+keyA)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	hr, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer hr.Body.Close()
	b, err := io.ReadAll(hr.Body)
	require.NoError(t, err)
	resp := string(b)
	require.Equal(t, http.StatusOK, hr.StatusCode, resp)
	require.Contains(t, resp, "DENIED: approval required, and this call cannot wait for one here")
	require.Contains(t, resp, "POST /v1/executions")
	require.Empty(t, effects(t, ts.out))
}

// A keep_state program never parks: its approval waits live.
func TestServer_approvals_keepStateWaitsLive(t *testing.T) {
	ts := newApprovalServer(t, nil)
	c := ts.client(keyA)
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: askingProgram, KeepState: true, Session: "s1"})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)
	require.Equal(t, serve.KindApproval, st.Pending[0].Kind)
	done, err := c.Decide(ctx(t), st.ID, serve.Decision{ID: st.Pending[0].ID, Approve: true})
	require.NoError(t, err)
	if done.Status != serve.StatusCompleted {
		done, err = c.Get(ctx(t), st.ID, true)
		require.NoError(t, err)
	}
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"sent"`, string(done.Value))
}

// A parked approval holds no instance nor goroutine, as a parked client
// call does.
func TestServer_approvals_parkedHoldNoGoroutine(t *testing.T) {
	ts := newApprovalServer(t, func(c *serve.Config) { c.Tenants[0].Quotas = serve.Quotas{MaxConcurrent: 2, MaxPending: 100} })
	c := ts.client(keyA)
	approvalPendingOn(t, c, askingProgram) // warm
	base := runtime.NumGoroutine()
	const n = 20
	ids := make([]*serve.ExecutionState, n)
	for i := range n { // more than max_concurrent: parked ones hold no slot
		ids[i] = approvalPendingOn(t, c, askingProgram)
	}
	require.Eventually(t, func() bool {
		_, body, _ := raw(t, "GET", ts.url+"/metrics", "", "")
		return strings.Contains(body, `ptcx_executions_parked{tenant="a"} `+strconv.Itoa(n+1))
	}, 10*time.Second, 10*time.Millisecond, "every pending execution parks")
	// A request's goroutines end just after its answer: wait for them, on a
	// loaded machine they may still be unwinding when the count is read.
	require.Eventually(t, func() bool { return runtime.NumGoroutine()-base < n/2 }, 10*time.Second, 10*time.Millisecond,
		"a parked execution holds no goroutine")
	done, err := c.Decide(ctx(t), ids[0].ID, serve.Decision{ID: ids[0].Pending[0].ID, Approve: true})
	require.NoError(t, err)
	require.JSONEq(t, `"sent"`, string(done.Value))
}

// A server stopped while an approval is pending, with a dir: store: the
// next one on the same directory still shows it pending, and its decision
// resumes it there; a decision given before the stop stands.
func TestServer_approvals_restartWithDirStore(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "sent")
	tools := approvalTools(t, out)
	withDir := func(node string) func(*serve.Config) {
		return func(c *serve.Config) {
			c.Tools = tools
			c.Store = &serve.StoreConfig{Kind: "dir", Path: dir}
			c.Node, c.Lease = node, "1s"
		}
	}
	before := newServer(t, withDir("first"))
	c := before.client(keyA)
	st := approvalPendingOn(t, c, askingProgram)
	two := approvalPendingOn(t, c, `const m = await tools.fetch({});
		const a = await tools.send({to: m, n: 1});
		const b = await tools.send({to: m, n: 2});
		return [a, b]`)
	mid, err := c.Decide(ctx(t), two.ID, serve.Decision{ID: two.Pending[0].ID, Approve: true})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	serve.Crash(before.srv)

	after := newServer(t, withDir("second"))
	c = after.client(keyA)
	got, err := c.Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, got.Status)
	require.Equal(t, st.Pending, got.Pending, "kind, reason and labels survive")
	done, err := c.Decide(ctx(t), st.ID, serve.Decision{ID: st.Pending[0].ID, Reason: "after the restart"})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"DENIED: rejected by the approver: after the restart"`, string(done.Value))

	done, err = c.Decide(ctx(t), two.ID, serve.Decision{ID: mid.Pending[0].ID, Approve: true})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `["sent", "sent"]`, string(done.Value))
	require.Len(t, effects(t, out), 2, "each approved call ran once: no replay")
}

// A decision posted to a node that does not hold the execution is
// forwarded to its owner; once that node is lost, another takes the
// execution over (embedded NATS), and a decision posted to it resumes it
// there.
func TestCluster_approvals_takeOverOnAnotherNode(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sent")
	tools := approvalTools(t, out)
	nodes := newNodes(t, 2, func(_ int, c *serve.Config) { c.Tools = tools })
	c1, c2 := nodes[0].client(keyA), nodes[1].client(keyA)
	st := approvalPendingOn(t, c1, `const m = await tools.fetch({});
		const a = await tools.send({to: m, n: 1});
		const b = await tools.send({to: m, n: 2});
		return [a, b]`)
	got, err := c2.Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	require.Equal(t, st.Pending, got.Pending)
	mid, err := c2.Decide(ctx(t), st.ID, serve.Decision{ID: st.Pending[0].ID, Approve: true}) // forwarded to node 1
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	require.Equal(t, serve.KindApproval, mid.Pending[0].Kind)
	require.True(t, serve.Holds(nodes[0].srv, st.ID))
	serve.Crash(nodes[0].srv)

	deadline := time.Now().Add(20 * time.Second)
	for {
		done, err := c2.Decide(ctx(t), st.ID, serve.Decision{ID: mid.Pending[0].ID, Approve: true})
		if err == nil {
			require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
			require.JSONEq(t, `["sent", "sent"]`, string(done.Value))
			break
		}
		e := apiErr(t, err)
		require.Equal(t, http.StatusServiceUnavailable, e.Status, "%+v", e.Body) // until node 1's lease expires
		require.True(t, time.Now().Before(deadline), "still 503 after 20 s")
		time.Sleep(100 * time.Millisecond)
	}
	require.Len(t, effects(t, out), 2, "each approved call ran once")
}

// The Go client's Run decides approvals with RunOptions.Decide, and stops
// with ErrNoDecision without it.
func TestClient_run_decidesApprovals(t *testing.T) {
	ts := newApprovalServer(t, nil)
	c := ts.client(keyA)
	var asked []serve.PendingCall
	st, err := c.Run(ctx(t), serve.ExecutionRequest{Code: askingProgram}, client.RunOptions{
		Decide: func(_ context.Context, ps []serve.PendingCall) ([]serve.Decision, error) {
			asked = append(asked, ps...)
			return []serve.Decision{{ID: ps[0].ID, Approve: true}}, nil
		}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status, "%+v", st.Error)
	require.JSONEq(t, `"sent"`, string(st.Value))
	require.Len(t, asked, 1)
	require.Equal(t, "send", asked[0].Name)

	st, err = c.Run(ctx(t), serve.ExecutionRequest{Code: askingProgram}, client.RunOptions{})
	require.ErrorIs(t, err, client.ErrNoDecision)
	require.Equal(t, serve.StatusPending, st.Status)
}

// TestServer_approvals_clientToolNeedsApproval: a client tool declared
// needs_approval is put to a person first (an approval item; the client
// is not asked to run it), then, approved, to the client (a tool item);
// declined, the client never sees it.
func TestServer_approvals_clientToolNeedsApproval(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	pay := askTool
	pay.Name, pay.NeedsApproval = "pay", true
	code := `try { return await tools.pay({q: "10 EUR"}) } catch (e) { return e.code + ": " + e.message }`

	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: code, ClientTools: []serve.ClientTool{pay}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)
	require.Len(t, st.Pending, 1)
	require.Equal(t, serve.KindApproval, st.Pending[0].Kind, "the person first, not the client")
	require.Contains(t, st.Pending[0].Reason, "pay needs approval")

	mid, err := c.Decide(ctx(t), st.ID, serve.Decision{ID: st.Pending[0].ID, Approve: true})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		mid, err = c.Get(ctx(t), st.ID, false)
		require.NoError(t, err)
		return len(mid.Pending) == 1 && mid.Pending[0].Kind == serve.KindTool
	}, 10*time.Second, 5*time.Millisecond, "approved, the call goes to the client")
	require.Equal(t, "pay", mid.Pending[0].Name)
	require.JSONEq(t, `{"q":"10 EUR"}`, string(mid.Pending[0].Arguments))
	again, err := c.Decide(ctx(t), st.ID, serve.Decision{ID: st.Pending[0].ID, Approve: true})
	require.NoError(t, err, "the same decision again is a no-op, the call now the client's")
	require.Len(t, again.Pending, 1)
	_, err = c.Decide(ctx(t), st.ID, serve.Decision{ID: st.Pending[0].ID, Reason: "changed my mind"})
	require.Equal(t, http.StatusConflict, apiErr(t, err).Status, "a decision stands")
	done, err := c.ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "paid"))
	require.NoError(t, err)
	if done.Status != serve.StatusCompleted {
		done, err = c.Get(ctx(t), st.ID, true)
		require.NoError(t, err)
	}
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"paid"`, string(done.Value))

	// Declined: DENIED in the program, and no tool item ever.
	st, err = c.Execute(ctx(t), serve.ExecutionRequest{Code: code, ClientTools: []serve.ClientTool{pay}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)
	done, err = c.Decide(ctx(t), st.ID, serve.Decision{ID: st.Pending[0].ID, Reason: "too much"})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"DENIED: rejected by the approver: too much"`, string(done.Value))
	events, err := c.Events(ctx(t), st.ID, 0)
	require.NoError(t, err)
	for _, e := range events {
		require.NotEqual(t, serve.EventPending, e.Type, "a declined call is never the client's")
	}
}
