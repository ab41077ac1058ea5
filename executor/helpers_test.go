package executor_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// echoTool returns its arguments.
var echoTool = registry.Tool{
	Name: "echo", Description: "Return the arguments.", ConcurrencySafe: true,
	Body: func(_ context.Context, in api.Input) (api.Output, error) { return api.Output{Value: in.Args}, nil },
}

// ptcRegistry returns a registry in ptc mode with tools registered (none:
// run_code alone).
func ptcRegistry(t testing.TB, tools ...registry.Tool) *registry.Registry {
	t.Helper()
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	for _, tool := range tools {
		require.NoError(t, reg.Register(registry.Deployment, tool))
	}
	return reg
}

// fakeRuntime is a code runtime whose "program" is Go code that makes nested
// calls through the dispatcher the way a guest program would.
type fakeRuntime func(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error)

func (f fakeRuntime) Run(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
	return f(ctx, p, d)
}

// submit dispatches a call and returns where its result will arrive.
func submit(d wasmhost.Dispatcher, name, args string) <-chan wasmhost.CallResult {
	ch := make(chan wasmhost.CallResult, 1)
	d.Dispatch(name, json.RawMessage(args), func(r wasmhost.CallResult) { ch <- r })
	return ch
}

// await waits for a nested result, failing the test after a generous bound
// (a hang is a bug, not a slow machine).
func await(t *testing.T, ch <-chan wasmhost.CallResult) wasmhost.CallResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("nested call never settled")
		return wasmhost.CallResult{}
	}
}

// counter counts calls of a tool body.
type counter struct{ n atomic.Int64 }

func (c *counter) body(v any) registry.Body {
	return func(ctx context.Context, in api.Input) (api.Output, error) {
		c.n.Add(1)
		return api.ValueOutput(v)
	}
}

const objSchema = `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"additionalProperties":false}`

// fixture is a registry with a concurrency-safe read and an exclusive write.
type fixture struct {
	reg          *registry.Registry
	reads        counter
	writes       counter
	writeFinals  atomic.Int64
	writeFinalOK atomic.Bool
}

func newFixture(t *testing.T, mode api.Mode) *fixture {
	t.Helper()
	f := &fixture{reg: registry.New()}
	require.NoError(t, f.reg.DeclareMode(registry.Deployment, mode))
	require.NoError(t, f.reg.Register(registry.Deployment, registry.Tool{
		Name: "read", Description: "Read a file.", InputSchema: json.RawMessage(objSchema),
		ConcurrencySafe: true, Body: f.reads.body("file contents"),
	}))
	require.NoError(t, f.reg.Register(registry.Deployment, registry.Tool{
		Name: "write", Description: "Write a file.", InputSchema: json.RawMessage(objSchema),
		ConcurrencySafe: true, // collapsed calls must still schedule as exclusive
		Body:            f.writes.body(map[string]any{"written": true}),
		Finalize: func(ctx context.Context, r api.Result) api.Result {
			f.writeFinals.Add(1)
			f.writeFinalOK.Store(r.OK())
			return r
		},
	}))
	return f
}

// recorder records every hook invocation.
type recorder struct {
	mu     sync.Mutex
	events []string
	notes  []executor.Notification
}

func (r *recorder) add(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

func (r *recorder) notifications() []executor.Notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]executor.Notification(nil), r.notes...)
}

// hooks installs a listener, an approver, a guard and a post-execute listener
// that all record, and notifications.
func (r *recorder) hooks(cfg executor.Config) executor.Config {
	return cfg.
		WithPreExecute(func(ctx context.Context, req executor.Request) (executor.Decision, error) {
			r.add("pre:" + req.Tool)
			return executor.Decision{Verdict: executor.Ask, Reason: "check"}, nil
		}).
		WithApprover(executor.ApproverFunc(func(ctx context.Context, req executor.Request, q string) (executor.Approval, string, error) {
			r.add("approve:" + req.Tool)
			return executor.ApproveOnce, "", nil
		})).
		WithGuard(registry.Deployment, func(ctx context.Context, req executor.Request) (string, error) {
			r.add("guard:" + req.Tool)
			return "", nil
		}).
		WithPostExecute(func(ctx context.Context, req executor.Request, v json.RawMessage) (executor.PostDecision, error) {
			r.add("post:" + req.Tool)
			return executor.PostDecision{}, nil
		}).
		WithOnStart(func(s executor.Start) { r.add("start:" + s.Tool) }).
		WithOnResult(func(n executor.Notification) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.notes = append(r.notes, n)
			r.events = append(r.events, "result:"+n.Tool)
		})
}

func newExecutor(t testing.TB, reg *registry.Registry, cfg executor.Config) *executor.Executor {
	t.Helper()
	e, err := executor.New(reg, cfg)
	require.NoError(t, err)
	return e
}

func names(ss []api.Schema) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

// runCode builds run_code arguments.
func runCode(code string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"code": code, "description": "test program"})
	return b
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
