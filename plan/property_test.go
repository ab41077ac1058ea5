package plan_test

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx"
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/plan"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.Close()
	os.Exit(code)
}

// made is a nested call a program made, as its tool's body saw it.
type made struct {
	tool string
	args json.RawMessage
}

// recorder is a host whose tools record every call that reaches them.
type recorder struct {
	mu    sync.Mutex
	calls []made
	host  *ptcx.Host
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	r := &recorder{}
	tools := make([]ptcx.Tool, len(bound))
	for i, name := range bound {
		tools[i] = ptcx.Tool{Name: name, Description: "Records its calls.", ConcurrencySafe: true,
			Body: func(_ context.Context, in api.Input) (api.Output, error) {
				r.mu.Lock()
				r.calls = append(r.calls, made{tool: name, args: in.Args})
				r.mu.Unlock()
				return api.ValueOutput(map[string]string{"email": "ada@example.com", "name": "ada"})
			}}
	}
	h, err := ptcx.New(context.Background(), ptcx.WithCodeRuntime(testkit.Sandbox(t)), ptcx.WithTools(tools...), ptcx.WithMode(ptcx.ModeBoth))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, h.Close(context.Background())) })
	r.host = h
	return r
}

// run runs code and returns the calls that reached a tool.
func (r *recorder) run(t *testing.T, code string) []made {
	t.Helper()
	r.mu.Lock()
	r.calls = nil
	r.mu.Unlock()
	args, err := json.Marshal(map[string]string{"description": "plan property", "code": code})
	require.NoError(t, err)
	res := r.host.Execute(context.Background(), ptcx.Call{Name: "run_code", Args: args})
	if res.Err != nil {
		t.Logf("the program failed: %v", res.Err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// TestRead_coversEveryCallMade runs each program of the table in the real
// sandbox, with tools that record their calls, and checks that the plan
// covers every call made: the plan is dynamic, or the plan bound to
// itself admits each call (its tool, a site its arguments fit, and no more
// calls than sites where none repeats).
func TestRead_coversEveryCallMade(t *testing.T) {
	r := newRecorder(t)
	var planned, dynamicCalls int
	for _, c := range readCases {
		t.Run(c.name, func(t *testing.T) {
			p, err := plan.Read(c.code, bound)
			require.NoError(t, err)
			calls := r.run(t, c.code)
			if p.Dynamic {
				dynamicCalls += len(calls)
				return
			}
			b, err := plan.Bind(p, p)
			require.NoError(t, err)
			for _, m := range calls {
				require.NoError(t, b.Admit(m.tool, m.args), "a call the plan does not cover: %s(%s)\nplan: %+v", m.tool, m.args, p.Calls)
			}
			planned += len(calls)
		})
	}
	t.Logf("calls made: %d planned, %d under dynamic plans", planned, dynamicCalls)
	// The table's programs do call tools, planned and through the tricks
	// that make a plan dynamic.
	require.Greater(t, planned, 20)
	require.Greater(t, dynamicCalls, 10)
}
