package executor_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// Arguments with a key twice are refused at create, before validation (the
// quick check included) and before any policy: a policy reading the first
// value must never approve what the tool reads as the last. Direct, nested
// and run_code's own arguments alike.
func TestExecutor_Execute_duplicateKeysAreInvalidArgs(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModeBoth))
	var ran, policed atomic.Int64
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{
		Name: "read", ConcurrencySafe: true,
		// A schema simple enough for the quick check.
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		Body: func(context.Context, api.Input) (api.Output, error) {
			ran.Add(1)
			return api.ValueOutput("contents")
		},
	}))
	nested := make(chan wasmhost.CallResult, 1)
	rt := fakeRuntime(func(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		nested <- await(t, submit(d, "read", `{"path":"ok.txt","path":"/etc/shadow"}`))
		return wasmhost.Outcome{Result: json.RawMessage(`1`)}, nil
	})
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(rt).
		WithPreExecute(func(_ context.Context, req executor.Request) (executor.Decision, error) {
			if req.Tool == "read" {
				policed.Add(1)
			}
			return executor.Decision{}, nil
		}))

	for _, args := range []string{
		`{"path":"ok.txt","path":"/etc/shadow"}`,
		`{"path":"ok.txt","extra":{"a":1,"a":2}}`,
		`{"path":"ok.txt","\u0070ath":"/etc/shadow"}`,
	} {
		r := e.Execute(context.Background(), executor.Call{Name: "read", Args: json.RawMessage(args)})
		require.NotNil(t, r.Err, args)
		require.Equal(t, api.CodeInvalidArgs, r.Err.Code, args)
		require.Contains(t, r.Text, "appears twice", args)
	}

	r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: json.RawMessage(`{"code":"return 1","description":"d","code":"return 2"}`)})
	require.Equal(t, api.CodeInvalidArgs, r.Err.Code, r.Text)
	require.Equal(t, []string{`at /: the key "code" appears twice`}, r.Err.Violations)

	r = e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("await tools.read({path: \"x\"})")})
	require.True(t, r.OK(), r.Text)
	res := <-nested
	require.False(t, res.OK)
	require.Contains(t, res.Message, `the key "path" appears twice`)

	require.Zero(t, ran.Load(), "no body ran")
	require.Zero(t, policed.Load(), "no policy saw the calls")
}
