package plan_test

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/plan"
	"github.com/ptcx/ptcx/transpile"
	"github.com/ptcx/ptcx/wasmhost"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.Close()
	os.Exit(code)
}

// made is a nested call a program made, as the sandbox dispatched it.
type made struct {
	tool string
	args json.RawMessage
}

// recorder is a dispatcher that records every call and answers each with
// the same object.
type recorder struct {
	mu    sync.Mutex
	calls []made
}

func (r *recorder) Dispatch(name string, args json.RawMessage, done func(wasmhost.CallResult)) {
	r.mu.Lock()
	r.calls = append(r.calls, made{tool: name, args: args})
	r.mu.Unlock()
	done(wasmhost.CallResult{OK: true, Value: json.RawMessage(`{"email": "ada@example.com", "name": "ada"}`)})
}

// run runs code in the real sandbox as a plan-bound run runs it (stripped,
// with its tools only in the scope around its own) and returns the calls
// it made.
func run(t *testing.T, code string) []made {
	t.Helper()
	prog, err := transpile.Strip(code)
	require.NoError(t, err)
	r := &recorder{}
	_, err = testkit.Sandbox(t).Run(context.Background(), wasmhost.Program{JS: prog.JS, Tools: bound, LexicalTools: true,
		Limits: api.Limits{WallTime: 10 * time.Second}}, r)
	if err != nil {
		t.Logf("the program failed: %v", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// TestRead_coversEveryCallMade runs each program of the table in the real
// sandbox, as bound to a plan, with a dispatcher that records its calls (and
// enforces nothing), and checks that the plan
// covers every call made: the plan is dynamic, or the plan bound to
// itself admits each call (its tool, a site its arguments fit, and no more
// calls than sites where none repeats).
func TestRead_coversEveryCallMade(t *testing.T) {
	var planned, dynamicCalls int
	for _, c := range readCases {
		t.Run(c.name, func(t *testing.T) {
			p, err := plan.Read(c.code, bound)
			require.NoError(t, err)
			calls := run(t, c.code)
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
