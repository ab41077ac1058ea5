package serve_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// Executions run on the server's runners (runners.go): once one settles,
// its goroutine waits for the next instead of exiting, a run and a resumed
// run alike, the runners waiting never pass their bound under a burst,
// and none is left waiting once the server closes.
func TestServer_executionsRunOnRunners(t *testing.T) {
	const burst = 24
	ts := newServer(t, func(c *serve.Config) { c.Tenants[0].Quotas.MaxConcurrent = 2 * burst }) // the burst is never refused
	c := ts.client(keyA)
	waiting := func(what string, n int) {
		t.Helper()
		require.Eventually(t, func() bool { return serve.WaitingRunners(ts.srv) == n }, 5*time.Second, time.Millisecond, what)
	}
	require.Zero(t, serve.WaitingRunners(ts.srv), "nothing ran yet")
	for i := range 5 {
		st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `return 1 + 1`})
		require.NoError(t, err)
		require.Equal(t, serve.StatusCompleted, st.Status, "execution %d", i)
		// One after another, a runner takes each in turn (another starts
		// only when an execution comes before the last one counts itself
		// waiting).
		require.Eventually(t, func() bool { return serve.WaitingRunners(ts.srv) >= 1 }, 5*time.Second, time.Millisecond,
			"execution %d's goroutine waits for the next one", i)
		require.LessOrEqual(t, serve.WaitingRunners(ts.srv), serve.RunnersMaxIdle)
	}

	// A parked execution's resume runs on a runner too (the test config
	// parks at once: LiveWaitMS -1).
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `const a = await tools.ask({q: "n?"}); return a.n + 1`,
		ClientTools: []serve.ClientTool{askTool}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status)
	done, err := c.ToolResults(ctx(t), st.ID, serve.ToolResult{ID: st.Pending[0].ID, OK: true, Value: json.RawMessage(`{"n": 41}`)})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status)
	require.JSONEq(t, `42`, string(done.Value))
	require.Eventually(t, func() bool { return serve.WaitingRunners(ts.srv) >= 1 }, 5*time.Second, time.Millisecond, "the resume's runner waits")

	// A burst: every execution at once, then at most the bound wait.
	errs := make(chan error, burst)
	for range burst {
		go func() {
			st, err := c.Execute(context.Background(), serve.ExecutionRequest{Code: `return 1 + 1`})
			if err == nil && st.Status != serve.StatusCompleted {
				err = &statusError{st.Status}
			}
			errs <- err
		}()
	}
	for range burst {
		require.NoError(t, <-errs)
	}
	require.LessOrEqual(t, serve.WaitingRunners(ts.srv), serve.RunnersMaxIdle, "after a burst, at most the bound wait")

	require.NoError(t, ts.srv.Close(context.Background()))
	waiting("no runner waits once the server closed", 0)
}

type statusError struct{ status string }

func (e *statusError) Error() string { return "execution " + e.status }
