package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
	"github.com/ptcx/ptcx/serve/protocol"
)

// A client tool's data-flow members are read as a tools file's are: each
// refusal names the tool and the member; the constraints of one request
// are bounded together, below, at and past the bound.
func TestDecodeExecutionRequest_clientToolPolicy(t *testing.T) {
	tool := func(members string) []byte {
		return []byte(`{"code":"return 1","client_tools":[{"name":"ok","input_schema":{"type":"object"}},{"name":"pay","input_schema":{"type":"object"},` + members + `}]}`)
	}
	many := func(n, size int) string { // n constraints of size bytes
		c := "'" + strings.Repeat("x", size-len("'' != ''")) + "' != ''"
		parts := make([]string, n)
		for i := range parts {
			parts[i] = `"` + c + `"`
		}
		return `"constraints":[` + strings.Join(parts, ",") + `]`
	}
	tests := []struct {
		name    string
		members string
		want    string // "" when accepted
	}{
		{"all members", `"labels":{"integrity":"untrusted","confidentiality":"private"},"accepts":{"integrity":"trusted","args":{"to":{"confidentiality":"public"}},"on_violation":"ask"},"constraints":["args.amount <= 1000"],"calls_per_run":1,"cost":5,"max_cost":10`, ""},
		{"bad label level", `"labels":{"integrity":"sketchy"}`, `field client_tools[1] ("pay").labels: `},
		{"bad accepts level", `"accepts":{"confidentiality":"topsecret"}`, `field client_tools[1] ("pay").accepts: `},
		{"bad per-argument level", `"accepts":{"args":{"to":{"integrity":"x"}}}`, `field client_tools[1] ("pay").accepts.args.to: `},
		{"bad on_violation", `"accepts":{"on_violation":"maybe"}`, `field client_tools[1] ("pay").accepts.on_violation "maybe" is not`},
		{"constraint does not compile", `"constraints":["args.amount <="]`, `field client_tools[1] ("pay").constraints[0] "args.amount <=": does not compile`},
		{"constraint not a condition", `"constraints":["args.amount + 1"]`, `field client_tools[1] ("pay").constraints[0]`},
		{"empty constraint", `"constraints":[" "]`, `field client_tools[1] ("pay").constraints[0] " ": empty`},
		{"negative calls_per_run", `"calls_per_run":-1`, `field client_tools[1] ("pay").calls_per_run: -1 is negative`},
		{"negative cost", `"cost":-1`, `field client_tools[1] ("pay").cost: -1 is negative`},
		{"negative max_cost", `"max_cost":-2`, `field client_tools[1] ("pay").max_cost: -2 is negative`},
		{"constraints at the count", many(32, 64), ""},
		{"constraints past the count", many(33, 64), `field client_tools[1] ("pay").constraints: 33 of them, over the 32`},
		{"unknown member", `"handles":true`, `unknown field "handles"`},
		{"unknown member of a label", `"labels":{"integrity":"trusted","colour":"red"}`, `unknown field "colour"`},
		{"unknown member of accepts", `"accepts":{"call":{}}`, `unknown field "call"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := serve.DecodeExecutionRequest(tool(tt.members))
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.want)
		})
	}

	// The request's constraints together: 64 KiB at most.
	bodyOf := func(sizes ...int) []byte {
		var tools []string
		for i, size := range sizes {
			c := "'" + strings.Repeat("x", size-len("'' != ''")) + "' != ''"
			tools = append(tools, `{"name":"t`+strconv.Itoa(i)+`","input_schema":{"type":"object"},"constraints":["`+c+`"]}`)
		}
		return []byte(`{"code":"return 1","client_tools":[` + strings.Join(tools, ",") + `]}`)
	}
	sizes := func(total int) []int { // constraints of at most 2 KiB coming to total bytes
		var out []int
		for ; total >= 2048+16; total -= 2048 { // the last at least 16 bytes
			out = append(out, 2048)
		}
		return append(out, total)
	}
	_, err := serve.DecodeExecutionRequest(bodyOf(sizes(64<<10 - 1)...))
	require.NoError(t, err, "below")
	_, err = serve.DecodeExecutionRequest(bodyOf(sizes(64 << 10)...))
	require.NoError(t, err, "at")
	_, err = serve.DecodeExecutionRequest(bodyOf(sizes(64<<10 + 1)...))
	require.ErrorContains(t, err, `.constraints: the client tools' constraints come to more than 65536 bytes together`, "past")
}

// End to end: a client tool labelled untrusted taints the program, whose
// later call of a client tool that accepts trusted data only is DENIED
// before it reaches the client; the execution's state carries its label
// and the denial's flow.
func TestServer_clientToolPolicy_deniesBeforeTheClient(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	obj := json.RawMessage(`{"type":"object"}`)
	req := serve.ExecutionRequest{
		Code: `const mail = await tools.inbox({}); await tools.send({to: mail}); return "sent"`,
		ClientTools: []serve.ClientTool{
			{Name: "inbox", InputSchema: obj, Labels: &protocol.Label{Integrity: "untrusted"}},
			{Name: "send", InputSchema: obj, Accepts: &protocol.Accepts{Integrity: "trusted"}},
		},
	}
	var asked []string
	st, err := c.Run(ctx(t), req, client.RunOptions{Answer: func(_ context.Context, pending []serve.PendingCall) ([]serve.ToolResult, error) {
		var out []serve.ToolResult
		for _, p := range pending {
			asked = append(asked, p.Name)
			out = append(out, serve.ToolResult{ID: p.ID, OK: true, Value: json.RawMessage(`"attacker@evil.test"`)})
		}
		return out, nil
	}})
	require.NoError(t, err)
	require.Equal(t, []string{"inbox"}, asked, "send never reached the client")
	require.Equal(t, serve.StatusFailed, st.Status)
	require.NotNil(t, st.Labels)
	require.Equal(t, api.Label{Integrity: api.Untrusted}, *st.Labels)
	var denied *serve.CallRecord
	for i := range st.Calls {
		if st.Calls[i].Tool == "send" {
			denied = &st.Calls[i]
		}
	}
	require.NotNil(t, denied, "%+v", st.Calls)
	require.Equal(t, string(api.CodeDenied), denied.Code)

	// The same program with a trusted inbox completes, with no label.
	req.ClientTools[0].Labels = nil
	st, err = c.Run(ctx(t), req, client.RunOptions{Answer: func(_ context.Context, pending []serve.PendingCall) ([]serve.ToolResult, error) {
		var out []serve.ToolResult
		for _, p := range pending {
			out = append(out, serve.ToolResult{ID: p.ID, OK: true, Value: json.RawMessage(`"a@b.test"`)})
		}
		return out, nil
	}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status, "%+v", st.Error)
	require.Nil(t, st.Labels, "the lowest label is not written")
}

// A client tool's constraint and calls_per_run hold in serve: the refused
// calls never reach the client, and a direct call's (POST /v1/calls)
// denial carries its flow in error.policy.
func TestServer_clientToolPolicy_constraintsAndCounts(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	req := serve.ExecutionRequest{
		Code: `await tools.pay({amount: 5});
let refused = [];
for (const amount of [5000, 6]) { try { await tools.pay({amount}) } catch (e) { refused.push(amount) } }
return refused`,
		ClientTools: []serve.ClientTool{{Name: "pay", InputSchema: json.RawMessage(`{"type":"object"}`),
			Constraints: []string{"args.amount <= 1000"}, CallsPerRun: 1}},
	}
	var paid []string
	st, err := c.Run(ctx(t), req, client.RunOptions{Answer: func(_ context.Context, pending []serve.PendingCall) ([]serve.ToolResult, error) {
		var out []serve.ToolResult
		for _, p := range pending {
			paid = append(paid, string(p.Arguments))
			out = append(out, serve.ToolResult{ID: p.ID, OK: true, Value: json.RawMessage(`true`)})
		}
		return out, nil
	}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status, "%+v", st.Error)
	require.JSONEq(t, `[5000, 6]`, string(st.Value), "5000 by its constraint, 6 by calls_per_run")
	require.Equal(t, []string{`{"amount":5}`}, paid)
}

// A tenant's policy overlay tightens the server's tools for that tenant
// only: tenant a's read results are secret and its writes bounded by a
// constraint; tenant b's are as the tools declare.
func TestServer_tenantPolicyOverlay(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) {
		c.Tenants[0].Policy = map[string]serve.ToolPolicy{
			"read":  {Labels: &protocol.Label{Confidentiality: "secret"}},
			"write": {Constraints: []string{"!args.path.startsWith('etc/')"}, CallsPerRun: 2},
		}
	})
	prog := `await tools.write({path: "notes.txt", content: "hello"});
const text = await tools.read({path: "notes.txt"});
let refused = false;
try { await tools.write({path: "etc/x", content: "y"}) } catch (e) { refused = true }
return refused`
	a, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: prog})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, a.Status, "%+v", a.Error)
	require.JSONEq(t, `true`, string(a.Value))
	require.NotNil(t, a.Labels)
	require.Equal(t, api.Secret, a.Labels.Confidentiality)

	b, err := ts.client(keyB).Execute(ctx(t), serve.ExecutionRequest{Code: prog})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, b.Status, "%+v", b.Error)
	require.JSONEq(t, `false`, string(b.Value), "tenant b has no overlay")
	if b.Labels != nil {
		require.Less(t, b.Labels.Confidentiality, api.Secret)
	}
}

// A tenant's overlay is refused when the config is read (malformed) or
// when the server starts (a tool it does not have), naming the tenant,
// the tool and the member.
func TestConfig_tenantPolicyOverlay_refused(t *testing.T) {
	base := `{"listen":"127.0.0.1:0","tenants":[{"name":"a","key_sha256":"` + sum(keyA) + `","policy":%s}]}`
	for _, tt := range []struct{ name, policy, want string }{
		{"bad label", `{"read":{"labels":{"integrity":"meh"}}}`, `field tenants[0].policy.read.labels: `},
		{"bad constraint", `{"read":{"constraints":["args.path ="]}}`, `field tenants[0].policy.read.constraints[0] "args.path =": does not compile`},
		{"unknown member", `{"read":{"handle":true}}`, `unknown field "handle"`},
		{"negative count", `{"read":{"calls_per_run":-3}}`, `field tenants[0].policy.read.calls_per_run: -3 is negative`},
		{"bad name", `{"no such":{"cost":1}}`, `field tenants[0].policy: "no such" is not a tool name`},
		{"run_code", `{"run_code":{"cost":1}}`, `field tenants[0].policy: "run_code" is not a tool name`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := serve.ParseConfig([]byte(strings.Replace(base, "%s", tt.policy, 1)))
			require.ErrorContains(t, err, tt.want)
		})
	}
	// YAML reads the same members.
	cfg, err := serve.ParseConfig([]byte("listen: 127.0.0.1:0\ntenants:\n- name: a\n  key_sha256: " + sum(keyA) +
		"\n  policy:\n    read:\n      labels: {confidentiality: private}\n      accepts: {integrity: trusted, args: {path: {confidentiality: public}}}\n"))
	require.NoError(t, err)
	require.Equal(t, "private", cfg.Tenants[0].Policy["read"].Labels.Confidentiality)
	require.Equal(t, "public", cfg.Tenants[0].Policy["read"].Accepts.Args["path"].Confidentiality)

	// A name the server has no tool of: refused at start.
	_, err = serve.New(context.Background(), &serve.Config{
		Listen: "127.0.0.1:0", Workspace: t.TempDir(),
		Tenants: []serve.TenantConfig{{Name: "a", KeySHA256: sum(keyA), Policy: map[string]serve.ToolPolicy{"send_email": {Cost: 1}}}},
	}, serve.Options{Runtime: testkit.Sandbox(t)})
	require.ErrorContains(t, err, `tenant a: field policy.send_email: the server has no tool "send_email"`)

	// The tools file's tools are the server's too.
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	require.NoError(t, os.WriteFile(tools, []byte(`{"tools":[{"name":"send_email","description":"d","command":["/bin/true"],"calls_per_run":5}]}`), 0o600))
	srv, err := serve.New(context.Background(), &serve.Config{
		Listen: "127.0.0.1:0", Tools: tools,
		Tenants: []serve.TenantConfig{{Name: "a", KeySHA256: sum(keyA), Policy: map[string]serve.ToolPolicy{"send_email": {CallsPerRun: 1}}}},
	}, serve.Options{Runtime: testkit.Sandbox(t)})
	require.NoError(t, err)
	require.NoError(t, srv.Close(context.Background()))
}

// serve's /mcp gives a run_code result's label in _meta, as ptcx mcp does.
func TestServer_mcpRunCodeLabels(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) {
		c.Tenants[0].Policy = map[string]serve.ToolPolicy{"list": {Labels: &protocol.Label{Integrity: "untrusted"}}}
	})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"return await tools.list({path: \".\"})","description":"d"}}}`
	req, err := http.NewRequest("POST", ts.url+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+keyA)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	r, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	out := string(b)
	require.Equal(t, 200, r.StatusCode, out)
	var resp struct {
		Result struct {
			IsError bool                       `json:"isError"`
			Meta    map[string]json.RawMessage `json:"_meta"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &resp), out)
	require.False(t, resp.Result.IsError, out)
	require.JSONEq(t, `{"integrity":"untrusted","confidentiality":"public"}`, string(resp.Result.Meta["ptcx/labels"]), out)
}
