package executor_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// approverSaying approves or rejects every call, recording who was asked.
func approverSaying(who string, got executor.Approval, asked *[]string) executor.Approver {
	return executor.ApproverFunc(func(context.Context, executor.Request, string) (executor.Approval, string, error) {
		*asked = append(*asked, who)
		return got, who + " says no", nil
	})
}

func TestWithCallApprover_decidesInsteadOfTheDeployment(t *testing.T) {
	tests := []struct {
		name       string
		caller     executor.Approval // -1: no call approver on the context
		nested     bool
		wantAsked  []string
		wantWrites int64
	}{
		{name: "no call approver: the deployment's", caller: -1, wantAsked: []string{"deployment"}},
		{name: "the caller approves", caller: executor.ApproveOnce, wantAsked: []string{"caller"}, wantWrites: 1},
		{name: "the caller rejects", caller: executor.Reject, wantAsked: []string{"caller"}},
		{name: "nested: the caller approves", caller: executor.ApproveOnce, nested: true, wantAsked: []string{"caller"}, wantWrites: 1},
		{name: "nested: no call approver", caller: -1, nested: true, wantAsked: []string{"deployment"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, api.ModeBoth)
			var asked []string
			var nestedResult wasmhost.CallResult
			prog := fakeRuntime(func(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
				nestedResult = await(t, submit(d, "write", `{"path":"a"}`))
				return wasmhost.Outcome{Result: json.RawMessage(`1`)}, nil
			})
			e := newExecutor(t, f.reg, executor.NewConfig().WithRuntime(prog).WithPreExecute(ask).
				WithApprover(approverSaying("deployment", executor.Reject, &asked)))
			ctx := context.Background()
			if tt.caller >= 0 {
				ctx = executor.WithCallApprover(ctx, approverSaying("caller", tt.caller, &asked))
			}
			call := executor.Call{Name: "write", Args: json.RawMessage(`{"path":"a"}`)}
			if tt.nested {
				call = executor.Call{Name: registry.RunCode, Args: runCode("x")}
			}
			r := e.Execute(ctx, call)
			require.Equal(t, tt.wantAsked, asked)
			require.Equal(t, tt.wantWrites, f.writes.n.Load())
			if tt.nested {
				require.True(t, r.OK(), r.Text)
				require.Equal(t, tt.wantWrites == 1, nestedResult.OK, nestedResult.Message)
				return
			}
			require.Equal(t, tt.wantWrites == 1, r.OK(), r.Text)
			if !r.OK() {
				require.Equal(t, api.CodeDenied, r.Err.Code)
				require.Contains(t, r.Text, "rejected by the approver")
			}
		})
	}
}

func TestWithCallApprover_nilChangesNothing(t *testing.T) {
	ctx := context.Background()
	require.Equal(t, ctx, executor.WithCallApprover(ctx, nil))
}
