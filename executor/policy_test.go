package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

func allow(context.Context, executor.Request) (executor.Decision, error) {
	return executor.Decision{}, nil
}

func ask(_ context.Context, req executor.Request) (executor.Decision, error) {
	if req.Tool != "write" {
		return executor.Decision{}, nil
	}
	return executor.Decision{Verdict: executor.Ask, Reason: "writes need a human"}, nil
}

// isWrite limits a test hook to write: the program's own run_code call must
// pass policy in the nested cases.
func isWrite(req executor.Request) bool { return req.Tool == "write" }

// Acceptance 17: every kind of denial carries its reason, to a model-direct
// caller and to a program; a throwing hook is an error, not a crash.
func TestExecutor_Execute_denialsCarryTheirReason(t *testing.T) {
	tests := []struct {
		name     string
		cfg      executor.Config
		code     api.Code
		contains []string
	}{
		{
			name: "listener denies",
			cfg: executor.NewConfig().WithPreExecute(allow).WithPreExecute(func(_ context.Context, req executor.Request) (executor.Decision, error) {
				if !isWrite(req) {
					return executor.Decision{}, nil
				}
				return executor.Decision{Verdict: executor.Deny, Reason: "no writes on Fridays"}, nil
			}),
			code: api.CodeDenied, contains: []string{"denied by a pre-execute listener", "no writes on Fridays"},
		},
		{
			name: "approver rejects",
			cfg: executor.NewConfig().WithPreExecute(ask).WithApprover(executor.ApproverFunc(
				func(context.Context, executor.Request, string) (executor.Approval, string, error) {
					return executor.Reject, "the user said no", nil
				})),
			code: api.CodeDenied, contains: []string{"rejected by the approver", "the user said no"},
		},
		{
			name: "no approver",
			cfg:  executor.NewConfig().WithPreExecute(ask),
			code: api.CodeDenied, contains: []string{"no approver is configured", "writes need a human"},
		},
		{
			name: "approver fails",
			cfg: executor.NewConfig().WithPreExecute(ask).WithApprover(executor.ApproverFunc(
				func(context.Context, executor.Request, string) (executor.Approval, string, error) {
					return executor.ApproveOnce, "", errors.New("prompt closed")
				})),
			code: api.CodeDenied, contains: []string{"approval failed", "prompt closed"},
		},
		{
			name: "guard denies",
			cfg: executor.NewConfig().WithGuard("", func(_ context.Context, req executor.Request) (string, error) {
				if !isWrite(req) {
					return "", nil
				}
				return "path outside the sandbox", nil
			}),
			code: api.CodeDenied, contains: []string{`denied by a guard of scope "deployment"`, "path outside the sandbox"},
		},
		{
			name: "post-execute blocks",
			cfg: executor.NewConfig().WithPostExecute(func(_ context.Context, req executor.Request, _ json.RawMessage) (executor.PostDecision, error) {
				if !isWrite(req) {
					return executor.PostDecision{}, nil
				}
				return executor.PostDecision{Block: true, Feedback: "the result leaked a secret"}, nil
			}),
			code: api.CodeDenied, contains: []string{"blocked after execution", "the result leaked a secret"},
		},
		{
			name: "listener panics",
			cfg: executor.NewConfig().WithPreExecute(func(_ context.Context, req executor.Request) (executor.Decision, error) {
				if !isWrite(req) {
					return executor.Decision{}, nil
				}
				panic("listener bug")
			}),
			code: api.CodeInternal, contains: []string{"pre-execute listener 1 failed", "listener bug"},
		},
		{
			name: "listener errors",
			cfg: executor.NewConfig().WithPreExecute(func(_ context.Context, req executor.Request) (executor.Decision, error) {
				if !isWrite(req) {
					return executor.Decision{}, nil
				}
				return executor.Decision{}, errors.New("policy store down")
			}),
			code: api.CodeInternal, contains: []string{"policy store down"},
		},
		{
			name: "guard panics",
			cfg: executor.NewConfig().WithGuard("", func(_ context.Context, req executor.Request) (string, error) {
				if !isWrite(req) {
					return "", nil
				}
				panic("guard bug")
			}),
			code: api.CodeInternal, contains: []string{"guard 1", "guard bug"},
		},
		{
			name: "post-execute panics",
			cfg: executor.NewConfig().WithPostExecute(func(_ context.Context, req executor.Request, _ json.RawMessage) (executor.PostDecision, error) {
				if !isWrite(req) {
					return executor.PostDecision{}, nil
				}
				panic("post bug")
			}),
			code: api.CodeInternal, contains: []string{"post-execute listener 1 failed", "post bug"},
		},
		{
			name: "unknown verdict",
			cfg: executor.NewConfig().WithPreExecute(func(_ context.Context, req executor.Request) (executor.Decision, error) {
				if !isWrite(req) {
					return executor.Decision{}, nil
				}
				return executor.Decision{Verdict: 42}, nil
			}),
			code: api.CodeInternal, contains: []string{"unknown verdict 42"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/model-direct", func(t *testing.T) {
			f := newFixture(t, api.ModeBoth)
			e := newExecutor(t, f.reg, tt.cfg)
			r := e.Execute(context.Background(), executor.Call{Name: "write", Args: json.RawMessage(`{"path":"a"}`)})
			require.Equal(t, tt.code, r.Err.Code, r.Text)
			for _, c := range tt.contains {
				require.Contains(t, r.Err.Message, c)
			}
			require.EqualValues(t, 1, f.writeFinals.Load(), "the finalizer applies once whatever the outcome")
		})
		t.Run(tt.name+"/nested", func(t *testing.T) {
			f := newFixture(t, api.ModePTC)
			var got wasmhost.CallResult
			rt := fakeRuntime(func(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
				got = await(t, submit(d, "write", `{"path":"a"}`))
				return wasmhost.Outcome{}, nil
			})
			cfg := tt.cfg.WithRuntime(rt)
			e := newExecutor(t, f.reg, cfg)
			r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("return")})
			require.True(t, r.OK(), "the program's own call passes policy: %s", r.Text)
			require.False(t, got.OK)
			for _, c := range tt.contains {
				require.Contains(t, got.Message, c)
			}
			require.NotContains(t, got.Message, string(tt.code), "codes never reach the program")
			require.Zero(t, f.writes.n.Load()-int64(boolToInt(tt.name == "post-execute blocks" || tt.name == "post-execute panics")), "the body ran only if denial came after it")
		})
	}
}

// The phases run in the documented order, and guards run deployment first,
// then the scope chain from farthest to nearest.
func TestExecutor_Execute_phaseAndGuardOrder(t *testing.T) {
	f := newFixture(t, api.ModeNative)
	require.NoError(t, f.reg.NewScope("preset", registry.Deployment))
	require.NoError(t, f.reg.NewScope("agent", "preset"))
	var rec recorder
	guard := func(name string) executor.Guard {
		return func(context.Context, executor.Request) (string, error) { rec.add("guard:" + name); return "", nil }
	}
	cfg := rec.hooks(executor.NewConfig()).
		WithGuard("agent", guard("agent")).
		WithGuard("preset", guard("preset")).
		WithGuard("other", guard("other"))
	e := newExecutor(t, f.reg, cfg)
	r := e.Execute(context.Background(), executor.Call{Scope: "agent", Name: "read", Args: json.RawMessage(`{"path":"a"}`)})
	require.True(t, r.OK(), r.Text)
	require.Equal(t, []string{"pre:read", "approve:read", "guard:read", "guard:preset", "guard:agent", "start:read", "post:read", "result:read"}, rec.list())
}

// A cancellation during approval denies with a reason.
func TestExecutor_Execute_approvalCancelled(t *testing.T) {
	f := newFixture(t, api.ModeNative)
	ctx, cancel := context.WithCancel(context.Background())
	cfg := executor.NewConfig().WithPreExecute(ask).WithApprover(executor.ApproverFunc(
		func(ctx context.Context, _ executor.Request, _ string) (executor.Approval, string, error) {
			cancel()
			return executor.ApproveOnce, "", nil
		}))
	e := newExecutor(t, f.reg, cfg)
	r := e.Execute(ctx, executor.Call{Name: "write"})
	require.Equal(t, api.CodeDenied, r.Err.Code)
	require.Contains(t, r.Err.Message, "approval was cancelled")
	require.Zero(t, f.writes.n.Load())
}

// A post-execute listener may replace the value; the replacement is what the
// caller and the notification see.
func TestExecutor_Execute_postExecuteReplaces(t *testing.T) {
	f := newFixture(t, api.ModeNative)
	var rec recorder
	cfg := rec.hooks(executor.NewConfig()).WithPostExecute(func(context.Context, executor.Request, json.RawMessage) (executor.PostDecision, error) {
		return executor.PostDecision{Replace: json.RawMessage(`"redacted"`)}, nil
	})
	e := newExecutor(t, f.reg, cfg)
	r := e.Execute(context.Background(), executor.Call{Name: "read"})
	require.True(t, r.OK())
	require.JSONEq(t, `"redacted"`, string(r.Value))
	require.Equal(t, "redacted", r.Text)
	require.Equal(t, r, rec.notifications()[0].Result)

	bad := newExecutor(t, f.reg, executor.NewConfig().WithPostExecute(func(context.Context, executor.Request, json.RawMessage) (executor.PostDecision, error) {
		return executor.PostDecision{Replace: json.RawMessage(`{oops`)}, nil
	}))
	require.Equal(t, api.CodeInternal, bad.Execute(context.Background(), executor.Call{Name: "read"}).Err.Code)
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
