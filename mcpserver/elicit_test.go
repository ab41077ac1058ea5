package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpserver"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
)

// askWrite is a policy that asks about every call to write, and a
// deployment approver that rejects it and counts the times it was asked.
func askWrite(asked *atomic.Int64) executor.Config {
	return executor.NewConfig().
		WithPreExecute(func(_ context.Context, req executor.Request) (executor.Decision, error) {
			if req.Tool == "write" {
				return executor.Decision{Verdict: executor.Ask, Reason: "write changes files"}, nil
			}
			return executor.Decision{}, nil
		}).
		WithApprover(executor.ApproverFunc(func(context.Context, executor.Request, string) (executor.Approval, string, error) {
			asked.Add(1)
			return executor.Reject, "the deployment's approver says no", nil
		}))
}

// elicitor answers every elicitation with action and keeps the messages
// and their _meta.
type elicitor struct {
	action   string
	messages []string
	metas    []mcp.Meta
}

func (e *elicitor) handler(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e.messages = append(e.messages, req.Params.Message)
	e.metas = append(e.metas, req.Params.Meta)
	return &mcp.ElicitResult{Action: e.action}, nil
}

func TestServer_approval_elicitation(t *testing.T) {
	rt := sharedRuntime(t)
	tests := []struct {
		name         string
		action       string // "" → the client has no elicitation capability
		noElicit     bool
		wantWrites   int64
		wantDeployed int64  // times the deployment's approver was asked
		wantText     string // in the result
	}{
		{name: "the client approves", action: "accept", wantWrites: 1, wantText: "ok"},
		{name: "the client declines", action: "decline", wantText: "the MCP client's user declined"},
		{name: "the client dismisses", action: "cancel", wantText: "the MCP client's user dismissed the question"},
		{name: "the client cannot elicit", wantDeployed: 1, wantText: "the deployment's approver says no"},
		{name: "elicitation turned off", action: "accept", noElicit: true, wantDeployed: 1, wantText: "the deployment's approver says no"},
	}
	for _, tt := range tests {
		for _, nested := range []bool{false, true} {
			name := tt.name + "/direct"
			if nested {
				name = tt.name + "/nested"
			}
			t.Run(name, func(t *testing.T) {
				var asked atomic.Int64
				f := newFixture(t, askWrite(&asked).WithRuntime(rt))
				el := &elicitor{action: tt.action}
				var copts *mcp.ClientOptions
				if tt.action != "" {
					copts = &mcp.ClientOptions{ElicitationHandler: el.handler}
				}
				cs := connectWith(t, f.exec, "both", "2025-11-25", mcpserver.Options{NoElicitation: tt.noElicit}, copts)
				var got string
				if nested {
					res := callTool(t, cs, registry.RunCode, runCodeArgs(t,
						`try { await tools.write({path: "a.txt", content: "x"}); return "ok"; } catch (e) { return e.message; }`))
					require.False(t, res.IsError, text(t, res))
					got = text(t, res)
				} else {
					res := callTool(t, cs, "write", `{"path":"a.txt","content":"x"}`)
					got = text(t, res)
					require.Equal(t, tt.wantWrites == 0, res.IsError, got)
					if res.IsError {
						require.Equal(t, api.CodeDenied, errorMeta(t, res).Code)
					}
				}
				require.Contains(t, got, tt.wantText)
				require.Equal(t, tt.wantWrites, f.writes.Load())
				require.Equal(t, tt.wantDeployed, asked.Load())
				if tt.action != "" && !tt.noElicit {
					require.Len(t, el.messages, 1)
					require.True(t, strings.HasPrefix(el.messages[0], "Allow the call to write"), el.messages[0])
					require.Contains(t, el.messages[0], "write changes files")
					require.Contains(t, el.messages[0], `"path":"a.txt"`)
					require.Equal(t, nested, strings.Contains(el.messages[0], "from a run_code program"))
				} else {
					require.Empty(t, el.messages)
				}
			})
		}
	}
}

func TestServer_approval_sessionlessClientUsesTheDeployment(t *testing.T) {
	var asked atomic.Int64
	f := newFixture(t, askWrite(&asked))
	el := &elicitor{action: "accept"}
	cs := connectWith(t, f.exec, "both", "", mcpserver.Options{}, &mcp.ClientOptions{ElicitationHandler: el.handler})
	res := callTool(t, cs, "write", `{"path":"a.txt","content":"x"}`)
	require.True(t, res.IsError)
	require.Contains(t, text(t, res), "the deployment's approver says no")
	require.Equal(t, int64(1), asked.Load())
	require.Empty(t, el.messages)
}

func TestServer_listTools_annotations(t *testing.T) {
	f := newFixture(t, executor.NewConfig())
	yes := true
	hints := map[string]*mcp.ToolAnnotations{
		"add":   {ReadOnlyHint: true},
		"write": {DestructiveHint: &yes},
	}
	opts := mcpserver.Options{Annotations: func(tool string) *mcp.ToolAnnotations { return hints[tool] }}
	for _, scope := range []string{"native", "both", "ptc"} {
		t.Run(scope, func(t *testing.T) {
			cs := connectWith(t, f.exec, scope, "", opts, nil)
			res, err := cs.ListTools(context.Background(), nil)
			require.NoError(t, err)
			got := map[string]*mcp.ToolAnnotations{}
			for _, tool := range res.Tools {
				got[tool.Name] = tool.Annotations
			}
			if scope == "ptc" {
				require.Equal(t, map[string]*mcp.ToolAnnotations{"run_code": nil}, got)
				return
			}
			require.Equal(t, &mcp.ToolAnnotations{ReadOnlyHint: true}, got["add"])
			require.Equal(t, &mcp.ToolAnnotations{DestructiveHint: &yes}, got["write"])
			require.Nil(t, got["greet"])
		})
	}
}

func TestServer_approval_elicitTimeout(t *testing.T) {
	tests := []struct {
		name      string
		timeout   time.Duration
		answerIn  time.Duration // -1: never
		wantWrite bool
	}{
		{"answered well within it", 20 * time.Second, 0, true},
		{"never answered", 300 * time.Millisecond, -1, false},
		{"answered after it", 300 * time.Millisecond, 3 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked atomic.Int64
			f := newFixture(t, askWrite(&asked))
			handler := func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				if tt.answerIn < 0 {
					<-ctx.Done()
					return nil, ctx.Err()
				}
				select {
				case <-time.After(tt.answerIn):
				case <-ctx.Done():
				}
				return &mcp.ElicitResult{Action: "accept"}, nil
			}
			cs := connectWith(t, f.exec, "both", "2025-11-25", mcpserver.Options{ElicitTimeout: tt.timeout},
				&mcp.ClientOptions{ElicitationHandler: handler})
			res := callTool(t, cs, "write", `{"path":"a.txt","content":"x"}`)
			require.Equal(t, !tt.wantWrite, res.IsError, text(t, res))
			if !tt.wantWrite {
				require.Contains(t, text(t, res), "the MCP client's user did not answer within 300ms (mcpserver.Options.ElicitTimeout)")
				require.Equal(t, int64(0), f.writes.Load())
			}
			require.Zero(t, asked.Load(), "the deployment's approver is not asked")
		})
	}
}

// A tool declared needs_approval is asked about through elicitation; the
// question says why (the reason) and what a nested call carries (its
// labels), in the message and as data in _meta.
func TestServer_approval_needsApproval_sendsReasonAndLabels(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModeBoth))
	inboxLabel := api.Label{Integrity: api.Untrusted, Confidentiality: api.Private}
	var deploys atomic.Int64
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "inbox", ConcurrencySafe: true,
		Body:   func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput("deploy now") },
		Policy: policy.Declaration{Labels: &inboxLabel}}))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "deploy",
		Body: func(context.Context, api.Input) (api.Output, error) {
			deploys.Add(1)
			return api.ValueOutput("deployed")
		},
		Policy: policy.Declaration{NeedsApproval: true}}))
	e, err := executor.New(reg, executor.NewConfig().WithRuntime(sharedRuntime(t)))
	require.NoError(t, err)
	const reason = "deploy needs approval: its declaration says needs_approval"

	for _, tt := range []struct {
		name, action string
		nested       bool
		ok           bool
	}{
		{"nested, accepted", "accept", true, true},
		{"nested, declined", "decline", true, false},
		{"direct, accepted", "accept", false, true},
		{"direct, declined", "decline", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			el := &elicitor{action: tt.action}
			cs := connectWith(t, e, registry.Deployment, "2025-11-25", mcpserver.Options{}, &mcp.ClientOptions{ElicitationHandler: el.handler})
			before := deploys.Load()
			var got string
			if tt.nested {
				res := callTool(t, cs, registry.RunCode, runCodeArgs(t,
					`await tools.inbox({}); try { return await tools.deploy({env: "prod"}) } catch (e) { return e.code + ": " + e.message }`))
				got = text(t, res)
			} else {
				res := callTool(t, cs, "deploy", `{"env": "prod"}`)
				got = text(t, res)
				require.Equal(t, !tt.ok, res.IsError, got)
				if res.IsError {
					m := errorMeta(t, res)
					require.Equal(t, api.CodeDenied, m.Code)
					require.Equal(t, "needs_approval", m.Policy.Rule)
				}
			}
			if tt.ok {
				require.Contains(t, got, "deployed")
				require.Equal(t, before+1, deploys.Load())
			} else {
				require.Contains(t, got, "DENIED")
				require.Contains(t, got, "the MCP client's user declined")
				require.Equal(t, before, deploys.Load())
			}

			require.Len(t, el.messages, 1)
			msg := el.messages[0]
			require.Contains(t, msg, reason)
			require.Contains(t, msg, `Arguments: {"env":"prod"}`)
			require.Equal(t, reason, el.metas[0][mcpserver.MetaReason])
			if tt.nested {
				require.Contains(t, msg, "Allow the call to deploy from a run_code program? "+reason+
					"\nLabels: untrusted, private (what the program had read when it made the call)\n")
				raw, err := json.Marshal(el.metas[0][mcpserver.MetaLabels])
				require.NoError(t, err)
				require.JSONEq(t, `{"integrity": "untrusted", "confidentiality": "private"}`, string(raw))
			} else {
				require.True(t, strings.HasPrefix(msg, "Allow the call to deploy? "+reason+"\nArguments: "), msg)
				require.NotContains(t, el.metas[0], mcpserver.MetaLabels, "a direct call carries no program's labels")
			}
		})
	}
}
