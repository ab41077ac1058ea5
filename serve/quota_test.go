package serve_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// hold starts n executions that wait on a client tool.
func hold(t *testing.T, ts *testServer, key string, n int) []string {
	t.Helper()
	var ids []string
	for range n {
		st, err := ts.client(key).Execute(ctx(t), serve.ExecutionRequest{Code: `return await tools.ask({q: "x"})`, ClientTools: []serve.ClientTool{askTool}})
		require.NoError(t, err)
		require.Equal(t, serve.StatusPending, st.Status)
		ids = append(ids, st.ID)
	}
	return ids
}

func TestServer_quota_maxConcurrent(t *testing.T) {
	for _, tt := range []struct {
		name  string
		held  int
		allow bool
	}{{"below", 1, true}, {"at", 2, false}} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newServer(t, func(c *serve.Config) { c.Tenants[0].Quotas = serve.Quotas{MaxConcurrent: 2, MaxPending: 10} })
			hold(t, ts, keyA, 3) // parked executions hold no slot
			for range tt.held {
				st, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 30000))`, Wait: boolp(false)})
				require.NoError(t, err)
				require.Equal(t, serve.StatusRunning, st.Status)
			}
			_, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
			if tt.allow {
				require.NoError(t, err)
				return
			}
			e := apiErr(t, err)
			require.Equal(t, 429, e.Status)
			require.Equal(t, serve.ReasonMaxConcurrent, e.Body.Reason)
			require.Equal(t, "1", e.RetryAfter)
			require.Contains(t, e.Body.Message, "quotas.max_concurrent")
			_, err = ts.client(keyB).Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
			require.NoError(t, err, "another tenant is not affected")
		})
	}
}

func TestServer_quota_maxPending(t *testing.T) {
	for _, tt := range []struct {
		name  string
		held  int
		allow bool
	}{{"below", 1, true}, {"at", 2, false}} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newServer(t, func(c *serve.Config) { c.Tenants[0].Quotas = serve.Quotas{MaxConcurrent: 10, MaxPending: 2} })
			hold(t, ts, keyA, tt.held)
			_, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: `return await tools.ask({q: "x"})`, ClientTools: []serve.ClientTool{askTool}})
			if tt.allow {
				require.NoError(t, err)
				return
			}
			e := apiErr(t, err)
			require.Equal(t, 429, e.Status)
			require.Equal(t, serve.ReasonMaxPending, e.Body.Reason)
			_, err = ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
			require.NoError(t, err, "an execution without client tools still runs")
		})
	}
}

func TestServer_quota_maxExecutions(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Server.MaxExecutions = 1 })
	hold(t, ts, keyA, 1)
	_, err := ts.client(keyB).Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
	e := apiErr(t, err)
	require.Equal(t, 429, e.Status)
	require.Equal(t, serve.ReasonMaxExecutions, e.Body.Reason)
}

func TestServer_Drain_refusesNewWorkAndReportsPending(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Server.DrainTimeoutMS = 300 })
	ids := hold(t, ts, keyA, 1)
	slow, err := ts.client(keyB).Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 100)); return "finished"`, Wait: boolp(false)})
	require.NoError(t, err)

	done := make(chan serve.DrainReport, 1)
	go func() { done <- ts.srv.Drain(context.Background()) }()
	require.Eventually(t, func() bool {
		status, _, _ := raw(t, "GET", ts.url+"/readyz", "", "")
		return status == 503
	}, 10e9, 10e6)
	_, err = ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
	e := apiErr(t, err)
	require.Equal(t, 503, e.Status)
	require.Equal(t, serve.CodeDraining, e.Body.Code)

	rep := <-done
	// Parked in a store (dir, nats) it is kept; without one it is cancelled.
	require.Equal(t, ids, append(append([]string(nil), rep.Cancelled...), rep.Parked...), "the pending execution is reported, not lost silently")
	got, err := ts.client(keyB).Get(ctx(t), slow.ID, false)
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, got.Status, "a running execution finished within the drain")
	require.Contains(t, ts.logs.String(), ids[0])
}

func TestServer_quota_computeSeconds(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Tenants[0].Quotas.ComputeSecondsPerMinute = 0.1 })
	c := ts.client(keyA)
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `for (;;) {}`, Limits: &serve.RunLimits{TimeoutMS: 300}})
	require.NoError(t, err, "a full bucket admits a run")
	require.Equal(t, serve.StatusFailed, st.Status)
	_, err = c.Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
	e := apiErr(t, err)
	require.Equal(t, 429, e.Status)
	require.Equal(t, serve.ReasonCompute, e.Body.Reason)
	require.NotEqual(t, "", e.RetryAfter)
	require.Contains(t, e.Body.Message, "quotas.compute_seconds_per_minute")
	_, err = ts.client(keyB).Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
	require.NoError(t, err, "another tenant's bucket is its own")
	status, body, _ := raw(t, "GET", ts.url+"/metrics", "", "")
	require.Equal(t, 200, status)
	require.Contains(t, body, `ptcx_compute_seconds_total{tenant="a"}`)
}
