package serve_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// requestLines returns the request log lines of route, in order.
func requestLines(t *testing.T, ts *testServer, route string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(ts.logs.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		if m["msg"] == "request" && m["route"] == route {
			out = append(out, m)
		}
	}
	return out
}

// The request log line of POST /v1/executions names the execution it
// created, or the one its idempotency_key returned; a refused request's
// names none.
func TestServer_requestLog_namesTheCreatedExecution(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	created, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
	require.NoError(t, err)
	keyed := serve.ExecutionRequest{Code: `return 2`, IdempotencyKey: "k1"}
	first, err := c.Execute(ctx(t), keyed)
	require.NoError(t, err)
	again, err := c.Execute(ctx(t), keyed)
	require.NoError(t, err)
	require.Equal(t, first.ID, again.ID)
	status, body, _ := raw(t, "POST", ts.url+"/v1/executions", keyA, `{"code":"return 1","code":"return 2"}`)
	require.Equal(t, 400, status, body)
	_, err = c.Get(ctx(t), created.ID, false)
	require.NoError(t, err)

	// A line is written once its response is, in no set order.
	require.Eventually(t, func() bool {
		return len(requestLines(t, ts, "POST /v1/executions")) == 4 && len(requestLines(t, ts, "GET /v1/executions/{id}")) == 1
	}, 10*time.Second, 10*time.Millisecond)
	var named []any
	for _, l := range requestLines(t, ts, "POST /v1/executions") {
		named = append(named, l["execution"])
	}
	require.ElementsMatch(t, []any{created.ID, first.ID, first.ID, ""}, named)
	get := requestLines(t, ts, "GET /v1/executions/{id}")
	require.Len(t, get, 1)
	require.Equal(t, created.ID, get[0]["execution"], "a route with the id in its path names it as before")
}
