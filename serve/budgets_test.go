package serve_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// gauge reads a tenant's gauge from /metrics.
func gauge(t *testing.T, ts *testServer, name, tenant string) float64 {
	t.Helper()
	_, body, _ := raw(t, "GET", ts.url+"/metrics", "", "")
	m := regexp.MustCompile(`(?m)^` + name + `\{tenant="` + tenant + `"\} (\S+)$`).FindStringSubmatch(body)
	require.NotNil(t, m, "%s{tenant=%q} in /metrics", name, tenant)
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return v
}

// gaugeOrZero is gauge, 0 for a series not there yet.
func gaugeOrZero(t *testing.T, ts *testServer, name, tenant string) float64 {
	t.Helper()
	_, body, _ := raw(t, "GET", ts.url+"/metrics", "", "")
	m := regexp.MustCompile(`(?m)^` + name + `\{tenant="` + tenant + `"\} (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return v
}

// TestServer_retainedBytes_evictsOldest is issue 32's item 5: a tenant's
// settled executions that each return about 1 MB are kept within its
// retained bytes budget, the oldest evicted first (read or not); the
// newest is always kept; another tenant's are untouched.
func TestServer_retainedBytes_evictsOldest(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) {
		c.Tenants[0].Quotas.MaxRetainedBytes = 3 << 20
	})
	b, err := ts.client(keyB).Execute(ctx(t), serve.ExecutionRequest{Code: `return "b".repeat(900000)`})
	require.NoError(t, err)
	var ids []string
	for i := range 6 {
		st, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: fmt.Sprintf(`return "%d".repeat(900000)`, i)})
		require.NoError(t, err)
		require.Equal(t, serve.StatusCompleted, st.Status)
		ids = append(ids, st.ID)
		require.LessOrEqual(t, gauge(t, ts, "ptcx_retained_bytes", "a"), float64(3<<20), "within the budget after execution %d", i)
	}
	// Each holds about 0.93 MB (its value, and its text as the model is
	// shown it, cut to the model budget): three fit in 3 MiB, so the three
	// newest are kept.
	for i, id := range ids {
		_, err := ts.client(keyA).Get(ctx(t), id, false)
		if i < len(ids)-3 {
			require.Equal(t, 404, apiErr(t, err).Status, "execution %d was evicted", i)
			continue
		}
		require.NoError(t, err, "execution %d is kept", i)
	}
	require.InDelta(t, 3*0.93e6, gauge(t, ts, "ptcx_retained_bytes", "a"), 0.05e6)
	_, err = ts.client(keyB).Get(ctx(t), b.ID, false)
	require.NoError(t, err, "tenant b's result is not a's to evict")
}

// TestServer_retainedBytes_newestKept: one result over the whole budget
// is still readable once settled (the newest is kept), and evicts every
// older one.
func TestServer_retainedBytes_newestKept(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Tenants[0].Quotas.MaxRetainedBytes = 64 << 10 })
	first, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
	require.NoError(t, err)
	big, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: `return "x".repeat(200000)`})
	require.NoError(t, err)
	got, err := ts.client(keyA).Get(ctx(t), big.ID, false)
	require.NoError(t, err)
	require.Len(t, string(got.Value), 200002)
	_, err = ts.client(keyA).Get(ctx(t), first.ID, false)
	require.Equal(t, 404, apiErr(t, err).Status)
}

// TestServer_retainedBytes_liveEvents: a live execution's events past the
// budget are counted, not kept (as past max_events); its result is whole.
func TestServer_retainedBytes_liveEvents(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Tenants[0].Quotas.MaxRetainedBytes = 64 << 10 })
	st, err := ts.client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: `for (let i = 0; i < 500; i++) console.log("y".repeat(1000)); return 1`})
	require.NoError(t, err)
	require.Len(t, st.Logs, 500, "the result keeps every log line")
	events, err := ts.client(keyA).Events(ctx(t), st.ID, 0)
	require.NoError(t, err)
	logs := 0
	var done struct {
		Dropped int `json:"dropped_events"`
	}
	for _, e := range events {
		switch e.Type {
		case serve.EventLog:
			logs++
		case serve.EventDone:
			require.NoError(t, json.Unmarshal(e.Data, &done))
		}
	}
	require.Greater(t, logs, 10, "events within the budget are kept")
	require.Less(t, logs, 70, "64 KiB holds about 60 events of 1 KB")
	require.Equal(t, 500-logs, done.Dropped, "the done event counts the dropped ones")
}

// TestServer_parkedBytes_waitsLive: past max_parked_bytes an execution that
// comes to park waits for its client live instead (it is pending, its
// instance held, not parked), and completes when answered; new executions
// with client tools are refused meanwhile (TestServer_admission_routeByBound).
func TestServer_parkedBytes_waitsLive(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) {
		c.Tenants[0].Quotas.MaxParkedBytes = 1
		c.Server.ParkGraceMS = -1 // its bytes written at once, as this test reads them
	})
	a := ts.client(keyA)
	slow, err := a.Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 1000)); return await tools.ask({q: "slow"})`,
		ClientTools: []serve.ClientTool{askTool}, Wait: boolp(false)})
	require.NoError(t, err)
	fast := hold(t, ts, keyA, 1)[0] // parks: the tenant's parked bytes were below the quota
	require.Equal(t, 1.0, gauge(t, ts, "ptcx_executions_parked", "a"))
	parked := gauge(t, ts, "ptcx_parked_bytes", "a")
	require.Greater(t, parked, 1.0, "one snapshot passes the 1-byte quota")

	st, err := a.Get(ctx(t), slow.ID, true)
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status)
	require.Equal(t, 1.0, gauge(t, ts, "ptcx_executions_parked", "a"), "the slow one waits live: it did not park")
	require.Equal(t, parked, gauge(t, ts, "ptcx_parked_bytes", "a"))
	done, err := a.ToolResults(ctx(t), slow.ID, serve.ToolResult{ID: st.Pending[0].ID, OK: true, Value: json.RawMessage(`"answered live"`)})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status)
	require.JSONEq(t, `"answered live"`, string(done.Value))

	fs, err := a.Get(ctx(t), fast, false)
	require.NoError(t, err)
	_, err = a.ToolResults(ctx(t), fast, serve.ToolResult{ID: fs.Pending[0].ID, OK: true, Value: json.RawMessage(`1`)})
	require.NoError(t, err)
	require.Zero(t, gauge(t, ts, "ptcx_parked_bytes", "a"), "a resumed execution's bytes are no longer counted")
}

// TestServer_parkedBytes_busyWithoutRoom: an execution that can neither
// park (parked bytes at the quota) nor be admitted again to wait live
// fails BUSY, retryable.
func TestServer_parkedBytes_busyWithoutRoom(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Tenants[0].Quotas.MaxParkedBytes = 1 })
	a := ts.client(keyA)
	slow, err := a.Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 1000)); return await tools.ask({q: "slow"})`,
		ClientTools: []serve.ClientTool{askTool}, Wait: boolp(false)})
	require.NoError(t, err)
	hold(t, ts, keyA, 1)
	defer serve.FillConcurrent(ts.srv, "a")()
	st, err := a.Get(ctx(t), slow.ID, true)
	require.NoError(t, err)
	require.Equal(t, serve.StatusFailed, st.Status)
	require.Equal(t, "BUSY", st.Error.Code)
	require.Contains(t, st.Error.Message, "quotas.max_parked_bytes")
	require.Contains(t, st.Error.Message, "quotas.max_concurrent")
}

// TestServer_streams_quota: past max_streams an event stream is refused;
// one closed makes room again.
func TestServer_streams_quota(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Tenants[0].Quotas.MaxStreams = 2 })
	ids := hold(t, ts, keyA, 1)
	open := func(key string) (*http.Response, error) {
		req, err := http.NewRequest("GET", ts.url+"/v1/executions/"+ids[0]+"/events", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		return http.DefaultClient.Do(req)
	}
	var held []*http.Response
	for range 2 {
		resp, err := open(keyA)
		require.NoError(t, err)
		require.Equal(t, 200, resp.StatusCode)
		held = append(held, resp)
	}
	require.Eventually(t, func() bool { return gauge(t, ts, "ptcx_event_streams", "a") == 2 }, 5*time.Second, 10*time.Millisecond)
	resp, err := open(keyA)
	require.NoError(t, err)
	var body struct {
		Error struct{ Reason string } `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	resp.Body.Close()
	require.Equal(t, 429, resp.StatusCode)
	require.Equal(t, serve.ReasonMaxStreams, body.Error.Reason)
	require.Equal(t, "1", resp.Header.Get("Retry-After"))

	held[0].Body.Close()
	require.Eventually(t, func() bool { return gauge(t, ts, "ptcx_event_streams", "a") == 1 }, 5*time.Second, 10*time.Millisecond)
	resp, err = open(keyA)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "a closed stream makes room")
	resp.Body.Close()
	held[1].Body.Close()
}
