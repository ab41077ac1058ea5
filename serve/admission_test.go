package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/wasmhost"
)

// admissionRoute is one way a tenant starts work.
type admissionRoute struct {
	name string
	// client routes declare client tools: only they meet max_pending and
	// parked_bytes.
	client bool
	method string
	path   string
	body   string
}

var admissionRoutes = []admissionRoute{
	{name: "executions", method: "POST", path: "/v1/executions", body: `{"code":"return 1"}`},
	{name: "executions with client tools", client: true, method: "POST", path: "/v1/executions",
		body: `{"code":"return 1","client_tools":[{"name":"ask","description":"d","input_schema":{"type":"object"}}]}`},
	{name: "executions keep_state", method: "POST", path: "/v1/executions", body: `{"code":"return 1","session":"s1","keep_state":true}`},
	{name: "calls run_code", method: "POST", path: "/v1/calls", body: `{"name":"run_code","arguments":{"code":"return 1","description":"d"}}`},
	{name: "mcp tools/call", method: "POST", path: "/mcp",
		body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"return 1","description":"d"}}}`},
}

// refusal is what a route answered: the status, Retry-After, and the code
// and reason of the error (the envelope's, or a JSON-RPC error's data).
type refusal struct {
	status     int
	retryAfter string
	code       string
	reason     string
}

func (rt admissionRoute) try(t *testing.T, ts *testServer, key string) refusal {
	t.Helper()
	req, err := http.NewRequest(rt.method, ts.url+rt.path, strings.NewReader(rt.body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	if rt.path == "/mcp" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		Error struct {
			Code   any    `json:"code"`
			Reason string `json:"reason"`
			Data   struct {
				Code   string `json:"code"`
				Reason string `json:"reason"`
			} `json:"data"`
		} `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	r := refusal{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	switch c := body.Error.Code.(type) {
	case string: // the error envelope
		r.code, r.reason = c, body.Error.Reason
	case float64: // a JSON-RPC error (/mcp)
		require.Equal(t, float64(-32000), c, "a refused MCP request gets the server-error code")
		r.code, r.reason = body.Error.Data.Code, body.Error.Data.Reason
	}
	return r
}

// longRun starts an execution of key's that runs until cancelled, and
// cancels it at the end of the test.
func longRun(t *testing.T, ts *testServer, key string) string {
	t.Helper()
	st, err := ts.client(key).Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 60000))`, Wait: boolp(false)})
	require.NoError(t, err)
	require.Equal(t, serve.StatusRunning, st.Status)
	t.Cleanup(func() { _, _ = ts.client(key).Cancel(context.Background(), st.ID) })
	return st.ID
}

// TestServer_admission_routeByBound tries every bound of a tenant's
// admission against every route that starts work (issue 32: /mcp skipped
// them all): each route past the bound is refused with the same status,
// code, reason and Retry-After, and another tenant is not (but for
// draining, which is the server's). A route a bound does not apply to is
// admitted (max_pending and parked_bytes are for executions that declare
// client tools).
func TestServer_admission_routeByBound(t *testing.T) {
	for _, b := range []struct {
		name   string
		quotas serve.Quotas
		// hold takes what the bound allows; it may return a function that
		// gives it back early (before the refusals of tenant b are tried).
		hold       func(t *testing.T, ts *testServer)
		status     int
		code       string
		reason     string
		retryAfter string
		clientOnly bool
		server     bool // the whole server's: tenant b is refused too
	}{
		{name: "max_concurrent", quotas: serve.Quotas{MaxConcurrent: 1},
			hold:   func(t *testing.T, ts *testServer) { longRun(t, ts, keyA) },
			status: 429, code: "QUOTA_EXCEEDED", reason: serve.ReasonMaxConcurrent, retryAfter: "1"},
		{name: "compute_seconds", quotas: serve.Quotas{ComputeSecondsPerMinute: 1},
			hold:   func(t *testing.T, ts *testServer) { longRun(t, ts, keyA) }, // reserves its 30 s limit
			status: 429, code: "QUOTA_EXCEEDED", reason: serve.ReasonCompute, retryAfter: "1"},
		{name: "memory_share", quotas: serve.Quotas{MaxMemoryMB: 256},
			hold:   func(t *testing.T, ts *testServer) { longRun(t, ts, keyA) }, // commits its 256 MiB
			status: 429, code: "QUOTA_EXCEEDED", reason: serve.ReasonMemoryShare, retryAfter: "1"},
		{name: "max_pending", quotas: serve.Quotas{MaxPending: 1}, clientOnly: true,
			hold:   func(t *testing.T, ts *testServer) { hold(t, ts, keyA, 1) },
			status: 429, code: "QUOTA_EXCEEDED", reason: serve.ReasonMaxPending, retryAfter: "1"},
		{name: "parked_bytes", quotas: serve.Quotas{MaxParkedBytes: 1}, clientOnly: true,
			hold:   func(t *testing.T, ts *testServer) { hold(t, ts, keyA, 1) }, // its snapshot passes 1 byte
			status: 429, code: "QUOTA_EXCEEDED", reason: serve.ReasonParkedBytes, retryAfter: "1"},
		{name: "draining", server: true,
			hold: func(t *testing.T, ts *testServer) {
				longRun(t, ts, keyA) // the drain waits for it
				go ts.srv.Drain(context.Background())
				require.Eventually(t, func() bool {
					status, _, _ := raw(t, "GET", ts.url+"/readyz", "", "")
					return status == 503
				}, 10*time.Second, 10*time.Millisecond)
			},
			status: 503, code: "DRAINING", retryAfter: "1"},
	} {
		t.Run(b.name, func(t *testing.T) {
			ts := newServer(t, func(c *serve.Config) {
				c.Tenants[0].Quotas = b.quotas
				c.Server.DrainTimeoutMS = 30000
				c.Server.ParkGraceMS = -1 // parked bytes count once written: at once here
			})
			b.hold(t, ts)
			for _, rt := range admissionRoutes {
				got := rt.try(t, ts, keyA)
				if b.clientOnly && !rt.client {
					require.Equal(t, 200, got.status, "%s: %s does not apply to %s", b.name, b.name, rt.name)
					continue
				}
				require.Equal(t, refusal{status: b.status, retryAfter: b.retryAfter, code: b.code, reason: b.reason}, got, "%s on %s", b.name, rt.name)
				if !b.server {
					require.Equal(t, 200, rt.try(t, ts, keyB).status, "%s on %s: tenant b is not affected", b.name, rt.name)
				}
			}
		})
	}
}

// TestServer_admission_mcpBatch: every tools/call of a batch is admitted;
// one refused refuses the POST, each request answered with the error.
func TestServer_admission_mcpBatch(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Tenants[0].Quotas = serve.Quotas{MaxConcurrent: 1} })
	call := func(id int) string {
		return `{"jsonrpc":"2.0","id":` + strings.Repeat("1", id) + `,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"return 1","description":"d"}}}`
	}
	status, body, hdr := raw(t, "POST", ts.url+"/mcp", keyA, "["+call(1)+","+call(2)+"]")
	require.Equal(t, 429, status, body)
	require.Equal(t, "1", hdr.Get("Retry-After"))
	var out []struct {
		ID    int `json:"id"`
		Error struct {
			Data struct{ Reason string } `json:"data"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out), body)
	require.Len(t, out, 2)
	require.Equal(t, []int{1, 11}, []int{out[0].ID, out[1].ID})
	require.Equal(t, serve.ReasonMaxConcurrent, out[1].Error.Data.Reason)
}

// TestServer_admission_mcpSpellings: a tools/call written in a way the
// MCP handler may read differently (a method key in another case, twice)
// is admitted as a call all the same: no spelling reaches the handler
// unadmitted.
func TestServer_admission_mcpSpellings(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Tenants[0].Quotas = serve.Quotas{MaxConcurrent: 1} })
	longRun(t, ts, keyA)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"return 1","description":"d"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call","params":{"name":"run_code","arguments":{"code":"return 1","description":"d"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping","params":{"name":"run_code","arguments":{"code":"return 1","description":"d"}}}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"run_code","arguments":{"code":"return 1","description":"d"}}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"run_code","arguments":{"code":"return 1","description":"d"}}}`,
	} {
		status, out, _ := raw(t, "POST", ts.url+"/mcp", keyA, body)
		require.Equal(t, 429, status, "%s: %s", body, out)
	}
	status, out, _ := raw(t, "POST", ts.url+"/mcp", keyA, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	require.NotEqual(t, 429, status, "a request that is no call is not admitted: %s", out)
}

// TestServer_admission_overdraw is issue 32's item 7 over HTTP: with 1
// CPU-s per minute, eight concurrent programs of a 4 s limit were all
// admitted; now one runs at a time.
func TestServer_admission_overdraw(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) {
		c.Tenants[0].Quotas = serve.Quotas{ComputeSecondsPerMinute: 1, MaxConcurrent: 8}
		c.Tenants[0].Limits = serve.RunLimits{TimeoutMS: 4000}
	})
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			status, _, _ := raw(t, "POST", ts.url+"/v1/executions", keyA, `{"code":"await new Promise(r => setTimeout(r, 500)); return 1"}`)
			mu.Lock()
			codes[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	require.Equal(t, 1, codes[200], "one program of a 4 s limit fits a 1 s bucket at a time: %v", codes)
	require.Equal(t, 7, codes[429], "%v", codes)
}

// TestServer_admission_memoryShareDefault: without max_memory_mb a
// tenant's share is the sandbox's cap divided by the tenants, never less
// than two runs at its memory limit: under a 1 GiB cap and three tenants,
// two runs of 256 MiB (512 MiB, over a third of the cap).
func TestServer_admission_memoryShareDefault(t *testing.T) {
	testkit.RequireGuest(t)
	rt, err := wasmhost.New(context.Background(), wasmhost.NewConfig().WithMaxCommittedMemory(1<<30))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })
	ts := newServerOn(t, rt, nil)
	longRun(t, ts, keyA)
	longRun(t, ts, keyA)
	got := admissionRoutes[0].try(t, ts, keyA)
	require.Equal(t, refusal{status: 429, retryAfter: "1", code: "QUOTA_EXCEEDED", reason: serve.ReasonMemoryShare}, got)
	require.Equal(t, 200, admissionRoutes[0].try(t, ts, keyB).status, "tenant b's share is its own")
}

// TestServer_admission_starvation is issue 32's item 2: tenant b, with the
// default quotas, holds everything they allow — programs that only await a
// timer, through /mcp and REST, and executions parked on its client —
// and tenant a's trivial execution is still admitted and completes. The
// sandbox's cap is 2 GiB here (the default is half the machine's memory)
// and its admission wait short, so that without per-tenant shares b's
// runs would fill it and a's would fail BUSY within the test.
func TestServer_admission_starvation(t *testing.T) {
	testkit.RequireGuest(t)
	rt, err := wasmhost.New(context.Background(), wasmhost.NewConfig().WithMaxCommittedMemory(2<<30).WithAdmissionWait(2*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })
	ts := newServerOn(t, rt, nil)

	// b's hold: executions parked on its client up to max_pending, then a
	// flood of 40 MCP calls and 40 REST executions of a program that waits
	// 8 s, all at once (an MCP call's run goes on to its end when its
	// client goes away: the MCP handler answers it then).
	hold(t, ts, keyB, serve.DefaultMaxPending)
	const wait = `await new Promise(r => setTimeout(r, 8000)); return 1`
	mcpBody := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"` + wait + `","description":"d"}}}`
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := map[string]int{}
	flood := func(route, path, body string) {
		defer wg.Done()
		req, _ := http.NewRequestWithContext(ctx, "POST", ts.url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+keyB)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return // cancelled at the end: it was admitted and waiting
		}
		resp.Body.Close()
		if resp.StatusCode != 429 {
			mu.Lock()
			admitted[route]++
			mu.Unlock()
		}
	}
	for range 40 {
		wg.Add(2)
		go flood("mcp", "/mcp", mcpBody)
		go flood("rest", "/v1/executions", `{"code":"`+wait+`","wait":false}`)
	}
	time.Sleep(500 * time.Millisecond) // the flood is admitted or refused by now

	st, err := ts.client(keyA).Execute(ctx, serve.ExecutionRequest{Code: `return 1`})
	require.NoError(t, err, "tenant a's trivial execution is admitted")
	require.Equal(t, serve.StatusCompleted, st.Status, "and completes")

	// What b holds is within its quotas: its runs in flight are within
	// its share of the cap (two runs of 256 MiB: a third of 2 GiB is
	// less) and its max_concurrent.
	metrics := func() string { _, body, _ := raw(t, "GET", ts.url+"/metrics", "", ""); return body }()
	require.Contains(t, metrics, `ptcx_committed_memory_bytes{tenant="b"} 5.36870912e+08`)
	cancel()
	wg.Wait()
}

// TestServer_oversubscribedWarns: tenants whose quotas together allow more
// live executions than server.max_executions are warned of at start.
func TestServer_oversubscribedWarns(t *testing.T) {
	const warning = "the tenants' quotas allow more live executions than server.max_executions"
	ts := newServer(t, nil) // 3 × (16 + 64) = 240 of 4096
	require.NotContains(t, ts.logs.String(), warning)
	ts = newServer(t, func(c *serve.Config) { c.Server.MaxExecutions = 239 })
	require.Contains(t, ts.logs.String(), warning)
}
