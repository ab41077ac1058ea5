package executor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// A run_code call cancelled as its run ends is CODE_RUN_FAILED (abort), with
// the run's logs, whatever the run returned: the cancellation lands after
// the program settled and before the call concluded, the window in which it
// used to be ABORTED. The runtime cancels the call itself just before it
// returns, so the window is hit every time.
func TestRunCode_cancelledAsItFinishes_isAbort(t *testing.T) {
	for _, tt := range []struct {
		name string
		run  func() (wasmhost.Outcome, error)
		logs []string
	}{
		{"successful", func() (wasmhost.Outcome, error) {
			return wasmhost.Outcome{Logs: []string{"one", "two"}, Result: []byte(`42`)}, nil
		}, []string{"one", "two"}},
		{"with no output", func() (wasmhost.Outcome, error) { return wasmhost.Outcome{}, nil }, nil},
		{"failed in the sandbox", func() (wasmhost.Outcome, error) {
			return wasmhost.Outcome{}, errors.New("the sandbox broke")
		}, nil},
		{"busy", func() (wasmhost.Outcome, error) {
			return wasmhost.Outcome{}, fmt.Errorf("no room: %w", wasmhost.ErrBusy)
		}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rt := fakeRuntime(func(context.Context, wasmhost.Program, wasmhost.Dispatcher) (wasmhost.Outcome, error) {
				cancel()
				return tt.run()
			})
			e := newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(rt))
			r := e.Execute(ctx, executor.Call{Name: "run_code", Args: runCode("return 42")})
			require.NotNil(t, r.Err, r.Text)
			require.Equal(t, api.CodeCodeRunFailed, r.Err.Code, r.Text)
			require.Equal(t, api.KindAbort, r.Err.Kind, r.Text)
			require.ErrorIs(t, r.AsError(), context.Canceled)
			require.Equal(t, tt.logs, r.Err.Logs)
			require.True(t, strings.HasPrefix(r.Text, "the run was cancelled"), r.Text)
			for _, l := range tt.logs {
				require.Contains(t, r.Text, l)
			}
		})
	}
}

// A run_code call that fails with CODE_RUN_FAILED as it is cancelled keeps
// its own kind: the program failed on its own.
func TestRunCode_cancelledAsItFails_keepsTheKind(t *testing.T) {
	for kind, run := range map[api.Kind]func() (wasmhost.Outcome, error){
		api.KindException: func() (wasmhost.Outcome, error) {
			return wasmhost.Outcome{}, &wasmhost.RunError{Kind: api.KindException, Message: "Error: planned", Logs: []string{"l"}}
		},
		api.KindOutputLimit: func() (wasmhost.Outcome, error) {
			return wasmhost.Outcome{}, &wasmhost.RunError{Kind: api.KindOutputLimit, Message: "the result does not fit", Logs: []string{"l"}}
		},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		rt := fakeRuntime(func(context.Context, wasmhost.Program, wasmhost.Dispatcher) (wasmhost.Outcome, error) {
			cancel()
			return run()
		})
		e := newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(rt))
		r := e.Execute(ctx, executor.Call{Name: "run_code", Args: runCode("throw 1")})
		require.Equal(t, api.CodeCodeRunFailed, r.Err.Code, r.Text)
		require.Equal(t, kind, r.Err.Kind, r.Text)
		require.Equal(t, []string{"l"}, r.Err.Logs)
	}
}

// Any other tool cancelled after its body returned is still ABORTED.
func TestExecutor_Execute_toolCancelledAsItFinishes_isAborted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := registry.New()
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "t",
		Body: func(context.Context, api.Input) (api.Output, error) {
			cancel()
			return api.ValueOutput("done")
		}}))
	r := newExecutor(t, reg, executor.NewConfig()).Execute(ctx, executor.Call{Name: "t"})
	require.Equal(t, api.CodeAborted, r.Err.Code, r.Text)
}

// A runtime with no room for the run makes run_code fail with the retryable
// BUSY; a runtime's other failures stay INTERNAL.
func TestRunCode_busyRuntime(t *testing.T) {
	for _, tt := range []struct {
		err  error
		code api.Code
	}{
		{wasmhost.ErrBusy, api.CodeBusy},
		{fmt.Errorf("wasmhost: admission: %w", wasmhost.ErrBusy), api.CodeBusy},
		{errors.New("wasmhost: something else"), api.CodeInternal},
	} {
		rt := fakeRuntime(func(context.Context, wasmhost.Program, wasmhost.Dispatcher) (wasmhost.Outcome, error) {
			return wasmhost.Outcome{}, tt.err
		})
		e := newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(rt))
		r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode("return 1")})
		require.Equal(t, tt.code, r.Err.Code, r.Text)
		if tt.code == api.CodeBusy {
			require.ErrorIs(t, r.AsError(), api.ErrBusy)
			require.ErrorIs(t, r.AsError(), wasmhost.ErrBusy, "the runtime's error is the cause")
			require.Contains(t, r.Text, "retry later")
			require.NotContains(t, r.Text, "admission", "host internals stay out of the message")
		}
	}
}
