package serve_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// TestServer_idlePark: a program that only waits (here on a timer, over
// REST and over /mcp) gives its instance and committed memory back to the
// sandbox after the grace, keeps its tenant's quotas (it is still running
// for them), and completes as if it had never parked.
func TestServer_idlePark(t *testing.T) {
	ts := newServerWith(t, serve.Options{}, nil)
	a := ts.client(keyA)
	st, err := a.Execute(ctx(t), serve.ExecutionRequest{Code: `const t0 = Date.now(); await new Promise(r => setTimeout(r, 1500)); return Date.now() - t0 >= 1500`, Wait: boolp(false)})
	require.NoError(t, err)
	mcpDone := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", ts.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"await new Promise(r => setTimeout(r, 1500)); return 1","description":"d"}}}`))
		req.Header.Set("Authorization", "Bearer "+keyA)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			mcpDone <- 0
			return
		}
		resp.Body.Close()
		mcpDone <- resp.StatusCode
	}()
	require.Eventually(t, func() bool { return gauge(t, ts, "ptcx_committed_memory_bytes", "a") == 2*256<<20 }, time.Second, 5*time.Millisecond,
		"both runs admitted")
	require.Eventually(t, func() bool {
		u := serve.SandboxUsage(ts.srv)
		return u.Runs == 0 && u.CommittedBytes == 0 && u.SuspendedBytes > 0
	}, 1200*time.Millisecond, 10*time.Millisecond, "both runs gave their instance and memory back while they wait")
	require.Equal(t, 2*256.0*(1<<20), gauge(t, ts, "ptcx_committed_memory_bytes", "a"), "a parked run still holds its tenant's share")

	done, err := a.Get(ctx(t), st.ID, true)
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status)
	require.JSONEq(t, `true`, string(done.Value), "the timer fired 1.5 s after it was set, parked or not")
	require.Equal(t, 200, <-mcpDone)
	require.Eventually(t, func() bool { return gaugeOrZero(t, ts, "ptcx_idle_parks_total", "a") >= 2 }, 5*time.Second, 10*time.Millisecond)
	require.Zero(t, gauge(t, ts, "ptcx_committed_memory_bytes", "a"))
}
