package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// bodyFixture registers one tool "t" with the given body and options.
func bodyFixture(t *testing.T, tool registry.Tool) (*executor.Executor, *recorder, *atomic.Int64) {
	t.Helper()
	reg := registry.New()
	finals := new(atomic.Int64)
	tool.Name = "t"
	tool.Finalize = func(ctx context.Context, r api.Result) api.Result {
		finals.Add(1)
		return r
	}
	require.NoError(t, reg.Register(registry.Deployment, tool))
	var rec recorder
	return newExecutor(t, reg, rec.hooks(executor.NewConfig())), &rec, finals
}

func TestExecutor_Execute_bodyOutcomes(t *testing.T) {
	tests := []struct {
		name     string
		tool     registry.Tool
		args     string
		code     api.Code
		contains string
		is       error
	}{
		{
			name: "panic becomes INTERNAL",
			tool: registry.Tool{Body: func(context.Context, api.Input) (api.Output, error) { panic("boom") }},
			code: api.CodeInternal, contains: "t panicked: panic: boom",
		},
		{
			name: "plain error is TOOL_FAILED",
			tool: registry.Tool{Body: func(context.Context, api.Input) (api.Output, error) {
				return api.Output{}, errors.New("disk full")
			}},
			code: api.CodeToolFailed, contains: "disk full",
		},
		{
			name: "coded error keeps its code",
			tool: registry.Tool{Body: func(context.Context, api.Input) (api.Output, error) {
				return api.Output{}, api.Errorf(api.CodeDenied, "read-only workspace")
			}},
			code: api.CodeDenied, contains: "read-only workspace",
		},
		{
			name: "timeout with a body that honours its context",
			tool: registry.Tool{Timeout: 20 * time.Millisecond, Body: func(ctx context.Context, _ api.Input) (api.Output, error) {
				<-ctx.Done()
				return api.Output{}, ctx.Err()
			}},
			code: api.CodeToolTimeout, contains: "did not finish within its timeout of 20ms", is: context.DeadlineExceeded,
		},
		{
			name: "timeout with a body that ignores its context",
			tool: registry.Tool{Timeout: 20 * time.Millisecond, Body: func(ctx context.Context, _ api.Input) (api.Output, error) {
				time.Sleep(2 * time.Second)
				return api.ValueOutput("late")
			}},
			code: api.CodeToolTimeout, contains: "timeout", is: api.ErrToolTimeout,
		},
		{
			name: "value that is not JSON",
			tool: registry.Tool{Body: func(context.Context, api.Input) (api.Output, error) {
				return api.Output{Value: json.RawMessage(`{"a":`)}, nil
			}},
			code: api.CodeInvalidToolOutput, contains: "not valid JSON",
		},
		{
			name: "value against the output schema",
			tool: registry.Tool{
				OutputSchema: json.RawMessage(`{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`),
				Body: func(context.Context, api.Input) (api.Output, error) {
					return api.ValueOutput(map[string]any{"n": "seven"})
				},
			},
			code: api.CodeInvalidToolOutput, contains: "at /n:",
		},
		{
			name: "every argument violation is listed",
			tool: registry.Tool{
				InputSchema: json.RawMessage(`{"type":"object","required":["a","b"],"properties":{"a":{"type":"string"},"c":{"type":"integer","minimum":0}},"additionalProperties":false}`),
				Body:        new(counter).body(1),
			},
			args: `{"c":-1,"d":true}`,
			code: api.CodeInvalidArgs, contains: "invalid arguments for t: arguments do not match the schema",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, rec, finals := bodyFixture(t, tt.tool)
			start := time.Now()
			r := e.Execute(context.Background(), executor.Call{Name: "t", Args: json.RawMessage(tt.args)})
			require.Less(t, time.Since(start), time.Second, "a timed-out body is not waited for")
			require.NotNil(t, r.Err, r.Text)
			require.Equal(t, tt.code, r.Err.Code, r.Text)
			require.Contains(t, r.Err.Message, tt.contains)
			require.Equal(t, r.Err.Message, r.Text)
			require.Nil(t, r.Value)
			if tt.is != nil {
				require.ErrorIs(t, r.AsError(), tt.is)
			}
			require.EqualValues(t, 1, finals.Load())
			require.Len(t, rec.notifications(), 1)
		})
	}
}

func TestExecutor_Execute_allViolationsListed(t *testing.T) {
	e, _, _ := bodyFixture(t, registry.Tool{
		InputSchema: json.RawMessage(`{"type":"object","required":["a","b"],"properties":{"a":{"type":"string"},"c":{"type":"integer","minimum":0}},"additionalProperties":false}`),
		Body:        new(counter).body(1),
	})
	r := e.Execute(context.Background(), executor.Call{Name: "t", Args: json.RawMessage(`{"c":-1,"d":true}`)})
	require.Equal(t, api.CodeInvalidArgs, r.Err.Code)
	require.Len(t, r.Err.Violations, 3, "%q", r.Err.Violations)
	joined := strings.Join(r.Err.Violations, "\n")
	require.Contains(t, joined, "missing properties")
	require.Contains(t, joined, "at /c:")
	require.Contains(t, joined, "'d'")
}

func TestExecutor_Execute_cancelledWhileRunningIsAborted(t *testing.T) {
	started := make(chan struct{})
	e, _, finals := bodyFixture(t, registry.Tool{Body: func(ctx context.Context, _ api.Input) (api.Output, error) {
		close(started)
		<-ctx.Done()
		return api.ValueOutput("done anyway")
	}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	r := e.Execute(ctx, executor.Call{Name: "t"})
	require.Equal(t, api.CodeAborted, r.Err.Code)
	require.ErrorIs(t, r.AsError(), context.Canceled)
	require.EqualValues(t, 1, finals.Load())
}

func TestExecutor_Execute_cancelledBeforeDispatch(t *testing.T) {
	var ran atomic.Bool
	e, rec, _ := bodyFixture(t, registry.Tool{Body: func(context.Context, api.Input) (api.Output, error) {
		ran.Store(true)
		return api.ValueOutput(1)
	}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := e.Execute(ctx, executor.Call{Name: "t"})
	require.Equal(t, api.CodeAbortedBeforeDispatch, r.Err.Code)
	require.False(t, ran.Load())
	require.Equal(t, []string{"result:t"}, rec.list(), "no policy runs for a call already cancelled")
}

func TestExecutor_Execute_success(t *testing.T) {
	e, rec, finals := bodyFixture(t, registry.Tool{
		OutputSchema: json.RawMessage(`{"type":"object"}`),
		Body: func(_ context.Context, in api.Input) (api.Output, error) {
			return api.Output{Value: in.Args, Text: "custom text"}, nil
		},
	})
	r := e.Execute(context.Background(), executor.Call{ID: "c1", Name: "t", Args: json.RawMessage(`{"x":1}`)})
	require.True(t, r.OK())
	require.Equal(t, "c1", r.ID)
	require.Equal(t, "t", r.Tool)
	require.JSONEq(t, `{"x":1}`, string(r.Value))
	require.Equal(t, "custom text", r.Text)
	require.EqualValues(t, 1, finals.Load())
	n := rec.notifications()
	require.Len(t, n, 1)
	require.Equal(t, r, n[0].Result)
	require.False(t, n[0].Nested)
}

func TestExecutor_Execute_finalizerShapesResult(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{
		Name: "t", Body: new(counter).body("a long value"),
		Finalize: func(ctx context.Context, r api.Result) api.Result {
			r.Text = "[finalized] " + r.Text
			r.ID = "forged" // identity is the executor's
			return r
		},
	}))
	e := newExecutor(t, reg, executor.NewConfig())
	r := e.Execute(context.Background(), executor.Call{ID: "c", Name: "t"})
	require.Equal(t, "c", r.ID)
	require.Equal(t, "[finalized] a long value", r.Text)

	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{
		Name: "p", Body: new(counter).body(1),
		Finalize: func(context.Context, api.Result) api.Result { panic("finalizer bug") },
	}))
	r = e.Execute(context.Background(), executor.Call{Name: "p"})
	require.Equal(t, api.CodeInternal, r.Err.Code)
	require.Contains(t, r.Err.Message, "the finalizer of p failed")
}

func TestExecutor_Execute_unknownScope(t *testing.T) {
	e := newExecutor(t, newFixture(t, api.ModeNative).reg, executor.NewConfig())
	r := e.Execute(context.Background(), executor.Call{Scope: "ghost", Name: "read"})
	require.Equal(t, api.CodeUnknownTool, r.Err.Code)
	require.Contains(t, r.Err.Message, `scope "ghost" does not exist`)
}

func TestExecutor_Execute_mintsUniqueIDs(t *testing.T) {
	e := newExecutor(t, newFixture(t, api.ModeNative).reg, executor.NewConfig())
	seen := map[string]bool{}
	for range 100 {
		r := e.Execute(context.Background(), executor.Call{Name: "read"})
		require.NotEmpty(t, r.ID)
		require.False(t, seen[r.ID], r.ID)
		seen[r.ID] = true
	}
}

func TestNew_rejectsBadConfig(t *testing.T) {
	_, err := executor.New(nil, executor.NewConfig())
	require.ErrorContains(t, err, "nil registry")
	_, err = executor.New(registry.New(), executor.NewConfig().WithLimits(api.Limits{MaxCalls: -1}))
	require.ErrorContains(t, err, "nested call limit -1 is negative")
	_, err = executor.New(registry.New(), executor.NewConfig().WithLimits(api.Limits{ComputeTime: -time.Second}))
	require.ErrorContains(t, err, "compute time limit -1s is negative")
}
