package ptcx_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/ptcx/ptcx"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/wasmhost"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.Close()
	os.Exit(code)
}

// noSandbox is a code runtime for tests that never run a program: a
// run_code call that reaches it fails.
type noSandbox struct{}

var errNoSandbox = errors.New("this test has no sandbox")

func (noSandbox) Run(context.Context, wasmhost.Program, wasmhost.Dispatcher) (wasmhost.Outcome, error) {
	return wasmhost.Outcome{}, errNoSandbox
}

// newHost builds a host that runs no program, closed with the test.
func newHost(t *testing.T, opts ...ptcx.Option) *ptcx.Host {
	t.Helper()
	h, err := ptcx.New(context.Background(), append([]ptcx.Option{ptcx.WithCodeRuntime(noSandbox{})}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, h.Close(context.Background())) })
	return h
}

// newSandboxHost builds a host on the test binary's shared sandbox.
func newSandboxHost(t *testing.T, opts ...ptcx.Option) *ptcx.Host {
	t.Helper()
	return newHost(t, append([]ptcx.Option{ptcx.WithCodeRuntime(testkit.Sandbox(t))}, opts...)...)
}

type addArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

func plus(_ context.Context, in addArgs) (float64, error) { return in.A + in.B, nil }

var addTool = ptcx.Func("add", "Add two numbers.", plus, ptcx.ConcurrencySafe())

func runCode(id, code string) ptcx.Call {
	args, _ := json.Marshal(map[string]string{"description": "test", "code": code})
	return ptcx.Call{ID: id, Name: "run_code", Args: args}
}

// closedOK returns a function that takes CloseSession's results, fails
// the test on its error, and returns whether there was a session.
func closedOK(t *testing.T) func(had bool, err error) bool {
	return func(had bool, err error) bool {
		t.Helper()
		require.NoError(t, err, "CloseSession")
		return had
	}
}
