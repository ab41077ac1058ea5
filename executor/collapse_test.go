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

// Acceptance 1: ptc advertises exactly run_code; the public view still lists
// every tool.
func TestExecutor_ptcWireSchemasAreRunCodeOnly(t *testing.T) {
	f := newFixture(t, api.ModePTC)
	e := newExecutor(t, f.reg, executor.NewConfig())

	wire, err := e.Registry().WireSchemas(registry.Deployment)
	require.NoError(t, err)
	require.Equal(t, []string{"run_code"}, names(wire))

	all, err := e.Registry().Schemas(registry.Deployment)
	require.NoError(t, err)
	require.Equal(t, []string{"read", "run_code", "write"}, names(all))

	// What is advertised and what may execute agree.
	require.Equal(t, api.CodeUnknownTool, e.Execute(context.Background(), executor.Call{Name: "read"}).Err.Code)
}

// Acceptance 2: both advertises every tool plus run_code; native every tool
// and no run_code.
func TestExecutor_bothAndNativeWireSchemas(t *testing.T) {
	for _, tt := range []struct {
		mode api.Mode
		want []string
	}{
		{api.ModeBoth, []string{"read", "run_code", "write"}},
		{api.ModeNative, []string{"read", "write"}},
	} {
		t.Run(string(tt.mode), func(t *testing.T) {
			f := newFixture(t, tt.mode)
			wire, err := f.reg.WireSchemas(registry.Deployment)
			require.NoError(t, err)
			require.Equal(t, tt.want, names(wire))
			e := newExecutor(t, f.reg, executor.NewConfig())
			r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("return 1")})
			if tt.mode == api.ModeNative {
				require.Equal(t, api.CodeUnknownTool, r.Err.Code)
				require.Equal(t, `unknown tool "run_code"`, r.Err.Message)
			} else {
				require.Equal(t, api.CodeInternal, r.Err.Code, "no runtime configured")
			}
		})
	}
}

// Acceptance 3 and 4: a model-direct write in ptc is UNKNOWN_TOOL with the
// route; no listener, approver or guard sees it; one notification.
func TestExecutor_Execute_collapsedCallNeverReachesPolicy(t *testing.T) {
	f := newFixture(t, api.ModePTC)
	var rec recorder
	e := newExecutor(t, f.reg, rec.hooks(executor.NewConfig()))

	r := e.Execute(context.Background(), executor.Call{Name: "write", Args: json.RawMessage(`{"path":"a","content":"x"}`)})

	require.False(t, r.OK())
	require.Equal(t, api.CodeUnknownTool, r.Err.Code)
	require.True(t, errors.Is(r.AsError(), api.ErrUnknownTool))
	require.Contains(t, r.Err.Message, `unknown tool "write": only run_code is callable directly — call write from inside a run_code program instead`)
	require.Contains(t, r.Err.Message, "tools.write(")
	require.Equal(t, r.Err.Message, r.Text)
	require.Zero(t, f.writes.n.Load(), "the body must not run")
	require.Equal(t, []string{"result:write"}, rec.list(), "no policy hook may observe a collapsed call")
	require.Len(t, rec.notifications(), 1)
	require.Zero(t, f.writeFinals.Load(), "a collapsed call resolves to nothing: no finalizer")
}

// Acceptance 5: with the context already cancelled, the collapsed call is
// ABORTED_BEFORE_DISPATCH and the visible tool's finalizer applies.
func TestExecutor_Execute_collapsedCallCancelled(t *testing.T) {
	f := newFixture(t, api.ModePTC)
	var rec recorder
	e := newExecutor(t, f.reg, rec.hooks(executor.NewConfig()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	r := e.Execute(ctx, executor.Call{Name: "write", Args: json.RawMessage(`{}`)})

	require.Equal(t, api.CodeAbortedBeforeDispatch, r.Err.Code)
	require.True(t, errors.Is(r.AsError(), context.Canceled))
	require.EqualValues(t, 1, f.writeFinals.Load())
	require.False(t, f.writeFinalOK.Load())
	require.Equal(t, []string{"result:write"}, rec.list())
	require.Zero(t, f.writes.n.Load())
}

// Acceptance 6: args that are not a JSON object are INVALID_ARGS even when the
// name would be collapsed; no policy, no body.
func TestExecutor_Execute_collapsedCallInvalidArgs(t *testing.T) {
	for _, args := range []string{`[1,2]`, `{"path":`, `"x"`, `null`, `1`, `{} {}`} {
		t.Run(args, func(t *testing.T) {
			f := newFixture(t, api.ModePTC)
			var rec recorder
			e := newExecutor(t, f.reg, rec.hooks(executor.NewConfig()))
			r := e.Execute(context.Background(), executor.Call{Name: "write", Args: json.RawMessage(args)})
			require.Equal(t, api.CodeInvalidArgs, r.Err.Code, r.Text)
			require.Equal(t, []string{"result:write"}, rec.list())
			require.Zero(t, f.writes.n.Load())
		})
	}
}

// Acceptance 7: a name that is not visible is simply unknown, without the
// route hint.
func TestExecutor_Execute_unregisteredName(t *testing.T) {
	f := newFixture(t, api.ModePTC)
	e := newExecutor(t, f.reg, executor.NewConfig())
	r := e.Execute(context.Background(), executor.Call{Name: "delete", Args: json.RawMessage(`[1]`)})
	require.Equal(t, api.CodeUnknownTool, r.Err.Code)
	require.Equal(t, `unknown tool "delete"`, r.Err.Message)
	require.NotContains(t, r.Err.Message, "run_code")
}

// Acceptance 8: the same write as a nested call with a live parent token
// succeeds; the program sees the final value.
func TestExecutor_nestedWriteSucceedsInPTC(t *testing.T) {
	f := newFixture(t, api.ModePTC)
	var got wasmhost.CallResult
	var bound []string
	rt := fakeRuntime(func(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		bound = p.Tools
		got = await(t, submit(d, "write", `{"path":"a","content":"x"}`))
		return wasmhost.Outcome{Result: got.Value}, nil
	})
	e := newExecutor(t, f.reg, executor.NewConfig().WithRuntime(rt))

	r := e.Execute(context.Background(), executor.Call{ID: "outer", Name: "run_code", Args: runCode("return 1")})

	require.True(t, r.OK(), r.Text)
	require.True(t, got.OK, got.Message)
	require.JSONEq(t, `{"written":true}`, string(got.Value))
	require.EqualValues(t, 1, f.writes.n.Load())
	require.Equal(t, []string{"read", "write"}, bound, "a program is bound to every visible tool but run_code")
	require.JSONEq(t, `{"logs":[],"result":{"written":true}}`, string(r.Value))
}

// Acceptance 9: a token from a settled execution (or another executor) is
// worthless: the call is treated as model-direct, so it collapses.
func TestExecutor_staleAndForeignTokensAreModelDirect(t *testing.T) {
	f := newFixture(t, api.ModePTC)
	var tok executor.Token
	rt := fakeRuntime(func(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		tok = executor.TokenOf(d)
		require.True(t, tok.Live())
		require.True(t, await(t, submit(d, "write", `{}`)).OK)
		return wasmhost.Outcome{}, nil
	})
	e := newExecutor(t, f.reg, executor.NewConfig().WithRuntime(rt))
	require.True(t, e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("return")}).OK())
	require.False(t, tok.Live(), "the token dies when the execution settles")

	stale := e.ExecuteWithToken(context.Background(), executor.Call{Name: "write", Args: json.RawMessage(`{}`)}, tok)
	require.Equal(t, api.CodeUnknownTool, stale.Err.Code)
	require.Contains(t, stale.Err.Message, "only run_code is callable directly")

	// A live token of another executor over the same registry is foreign.
	other := newExecutor(t, f.reg, executor.NewConfig().WithRuntime(fakeRuntime(
		func(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
			foreign := e.ExecuteWithToken(ctx, executor.Call{Name: "write", Args: json.RawMessage(`{}`)}, executor.TokenOf(d))
			require.Equal(t, api.CodeUnknownTool, foreign.Err.Code)
			return wasmhost.Outcome{}, nil
		})))
	require.True(t, other.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("return")}).OK())
	require.EqualValues(t, 1, f.writes.n.Load(), "only the live nested call ran")
}

// A call made after settlement, through the dispatcher the program had, is
// rejected.
func TestExecutor_callAfterSettlementRejects(t *testing.T) {
	f := newFixture(t, api.ModePTC)
	var keep wasmhost.Dispatcher
	rt := fakeRuntime(func(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		keep = d
		return wasmhost.Outcome{}, nil
	})
	e := newExecutor(t, f.reg, executor.NewConfig().WithRuntime(rt))
	require.True(t, e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("return")}).OK())
	late := await(t, submit(keep, "write", `{}`))
	require.False(t, late.OK)
	require.Contains(t, late.Message, "settled")
	require.Zero(t, f.writes.n.Load())
}

// Acceptance 10: native and both run a model-direct write.
func TestExecutor_Execute_directWriteInNativeAndBoth(t *testing.T) {
	for _, mode := range []api.Mode{api.ModeNative, api.ModeBoth} {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t, mode)
			var rec recorder
			e := newExecutor(t, f.reg, rec.hooks(executor.NewConfig()))
			r := e.Execute(context.Background(), executor.Call{Name: "write", Args: json.RawMessage(`{"path":"a"}`)})
			require.True(t, r.OK(), r.Text)
			require.EqualValues(t, 1, f.writes.n.Load())
			require.Equal(t, []string{"pre:write", "approve:write", "guard:write", "start:write", "post:write", "result:write"}, rec.list())
			require.EqualValues(t, 1, f.writeFinals.Load())
		})
	}
}

// Acceptance 11: the scheduling class of a collapsed call is exclusive even
// when the tool is concurrency-safe.
func TestExecutor_SchedulingClass_collapsedIsExclusive(t *testing.T) {
	ptc := newExecutor(t, newFixture(t, api.ModePTC).reg, executor.NewConfig())
	require.Equal(t, executor.Exclusive, ptc.SchedulingClass(registry.Deployment, "write"))
	require.Equal(t, executor.Exclusive, ptc.SchedulingClass(registry.Deployment, "read"))
	require.Equal(t, executor.Exclusive, ptc.SchedulingClass(registry.Deployment, "nope"))

	both := newExecutor(t, newFixture(t, api.ModeBoth).reg, executor.NewConfig())
	require.Equal(t, executor.Concurrent, both.SchedulingClass(registry.Deployment, "read"))
	require.Equal(t, executor.Exclusive, both.SchedulingClass(registry.Deployment, "run_code"))
}

// Acceptance 12: the deployment is native, an agent declares ptc: the agent
// is collapsed, a sibling is not.
func TestExecutor_agentDeclaresPTC(t *testing.T) {
	f := newFixture(t, api.ModeNative)
	require.NoError(t, f.reg.NewScope("agent-a", registry.Deployment))
	require.NoError(t, f.reg.NewScope("agent-b", registry.Deployment))
	require.NoError(t, f.reg.DeclareMode("agent-a", api.ModePTC))
	e := newExecutor(t, f.reg, executor.NewConfig())

	a := e.Execute(context.Background(), executor.Call{Scope: "agent-a", Name: "write"})
	require.Equal(t, api.CodeUnknownTool, a.Err.Code)
	b := e.Execute(context.Background(), executor.Call{Scope: "agent-b", Name: "write"})
	require.True(t, b.OK(), b.Text)

	wa, _ := f.reg.WireSchemas("agent-a")
	wb, _ := f.reg.WireSchemas("agent-b")
	require.Equal(t, []string{"run_code"}, names(wa))
	require.Equal(t, []string{"read", "write"}, names(wb))
}

// Acceptance 13: a preset declares ptc; an agent under it is collapsed; an
// agent elsewhere is not.
func TestExecutor_presetModeIsInherited(t *testing.T) {
	f := newFixture(t, api.ModeNative)
	require.NoError(t, f.reg.NewScope("preset-coder", registry.Deployment))
	require.NoError(t, f.reg.DeclareMode("preset-coder", api.ModePTC))
	require.NoError(t, f.reg.NewScope("agent-1", "preset-coder"))
	require.NoError(t, f.reg.NewScope("session-1", "agent-1"))
	require.NoError(t, f.reg.NewScope("agent-2", registry.Deployment))
	e := newExecutor(t, f.reg, executor.NewConfig())

	for _, scope := range []string{"agent-1", "session-1"} {
		r := e.Execute(context.Background(), executor.Call{Scope: scope, Name: "write"})
		require.Equal(t, api.CodeUnknownTool, r.Err.Code, scope)
	}
	r := e.Execute(context.Background(), executor.Call{Scope: "agent-2", Name: "write"})
	require.True(t, r.OK(), r.Text)
	require.EqualValues(t, 1, f.writes.n.Load())
}

// Acceptance 14: registering or restricting run_code fails in every mode.
func TestRegistry_runCodeIsReservedInEveryMode(t *testing.T) {
	for _, mode := range []api.Mode{api.ModeNative, api.ModePTC, api.ModeBoth} {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t, mode)
			err := f.reg.Register(registry.Deployment, registry.Tool{Name: "run_code", Body: new(counter).body(1)})
			require.ErrorIs(t, err, api.ErrInvalidDefinition)
			require.Contains(t, err.Error(), "reserved")

			require.NoError(t, f.reg.NewScope("agent", registry.Deployment))
			for _, rs := range []registry.Restriction{{Deny: []string{"run_code"}}, {Allow: []string{"read", "run_code"}}} {
				err = f.reg.Restrict("agent", rs)
				require.ErrorIs(t, err, api.ErrInvalidDefinition)
				require.Contains(t, err.Error(), "run_code cannot be restricted")
			}
		})
	}
}

// A program cannot call run_code: the nested call is refused.
func TestExecutor_nestedRunCodeIsRefused(t *testing.T) {
	f := newFixture(t, api.ModeBoth)
	var got wasmhost.CallResult
	rt := fakeRuntime(func(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		require.NotContains(t, p.Tools, "run_code")
		got = await(t, submit(d, "run_code", string(runCode("return 1"))))
		return wasmhost.Outcome{}, nil
	})
	e := newExecutor(t, f.reg, executor.NewConfig().WithRuntime(rt))
	require.True(t, e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("return")}).OK())
	require.False(t, got.OK)
	require.Contains(t, got.Message, "a program cannot call run_code")
	require.NotContains(t, got.Message, "UNKNOWN_TOOL", "error codes never reach the program")
}
