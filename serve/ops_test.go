package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/mcpserver"
	"github.com/ptcx/ptcx/serve"
)

// send sends method url with key (none when empty) and the headers hdr.
func send(t *testing.T, method, url, key, body string, hdr map[string]string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b.String(), resp.Header
}

// logLines returns the server's log lines whose msg is msg.
func logLines(t *testing.T, ts *testServer, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(ts.logs.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

var mintedID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// /metrics has the standard process_* and go_* series, under the names
// stock dashboards look for, beside the service's own ptcx_* ones; the
// renamed ptcx_process_* are gone.
func TestServer_metrics_standardCollectors(t *testing.T) {
	ts := newServer(t, nil)
	status, body, _ := send(t, "GET", ts.url+"/metrics", "", "", nil)
	require.Equal(t, 200, status)
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "go_gc_duration_seconds", "process_cpu_seconds_total",
		"process_resident_memory_bytes", "process_open_fds", "ptcx_pending_executions_held"} {
		require.Regexp(t, `(?m)^`+name+`[ {]`, body, name)
	}
	require.NotContains(t, body, "ptcx_process_")
	require.NotContains(t, body, "ptcx_go_")
}

// A client's X-Request-ID is kept when it fits (1 to 128 bytes of
// [A-Za-z0-9-_.:/+=]), else replaced by a minted one, never refused; every
// response carries it, whatever its route or status, and the request's
// log lines name it.
func TestServer_requestID(t *testing.T) {
	ts := newServer(t, nil)
	ok128 := strings.Repeat("a", 128)
	tests := []struct {
		name, sent string
		kept       bool
	}{
		{"uuid", "0f8fad5b-d9cb-469f-a165-70867728950e", true},
		{"every allowed character", "Az09-_.:/+=", true},
		{"at the bound", ok128, true},
		{"over the bound", ok128 + "a", false},
		{"huge", strings.Repeat("x", 8000), false},
		{"space", "two words", false},
		{"quote", `a"b`, false},
		{"angle brackets", "<script>", false},
		{"non-ascii", "idé", false},
		{"control", "a\tb", false},
		{"absent", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tt.sent != "" {
				hdr[serve.RequestIDHeader] = tt.sent
			}
			status, body, h := send(t, "POST", ts.url+"/v1/executions", keyA, `{"code":"return 1"}`, hdr)
			require.Equal(t, 200, status, body)
			got := h.Get(serve.RequestIDHeader)
			if tt.kept {
				require.Equal(t, tt.sent, got)
			} else {
				require.Regexp(t, mintedID, got)
			}
			var st serve.ExecutionState
			require.NoError(t, json.Unmarshal([]byte(body), &st))
			// Every line of the request names it: the execution's
			// acceptance and the request line (written after the response).
			require.Eventually(t, func() bool {
				n := 0
				for _, msg := range []string{"request", "execution accepted"} {
					for _, l := range logLines(t, ts, msg) {
						if l["execution"] == st.ID {
							require.Equal(t, got, l["request_id"], msg)
							n++
						}
					}
				}
				// The execution's own lines, written apart from any
				// request, name the request that started it.
				for _, l := range logLines(t, ts, "execution settled") {
					if l["execution"] == st.ID {
						require.Equal(t, got, l["start_request_id"], "execution settled")
						n++
					}
				}
				return n == 3
			}, 10*time.Second, 10*time.Millisecond)
		})
	}

	// Two requests without one get two ids.
	_, _, h1 := send(t, "GET", ts.url+"/healthz", "", "", nil)
	_, _, h2 := send(t, "GET", ts.url+"/healthz", "", "", nil)
	require.Regexp(t, mintedID, h1.Get(serve.RequestIDHeader))
	require.NotEqual(t, h1.Get(serve.RequestIDHeader), h2.Get(serve.RequestIDHeader))

	// Every response: open routes, refusals, unknown routes.
	for _, c := range []struct{ method, path, key string }{
		{"GET", "/healthz", ""}, {"GET", "/readyz", ""}, {"GET", "/metrics", ""},
		{"GET", "/v1/tools", ""}, {"GET", "/v1/tools", "wrong-key"}, {"GET", "/v1/executions/nope", keyA},
		{"GET", "/no/such/route", ""}, {"POST", "/v1/executions", keyA},
	} {
		_, _, h := send(t, c.method, ts.url+c.path, c.key, "{", map[string]string{serve.RequestIDHeader: "rid-" + c.method})
		require.Equal(t, "rid-"+c.method, h.Get(serve.RequestIDHeader), c.path)
	}
}

// Every 401 challenges with the scheme the API takes (RFC 6750): a
// missing key, a malformed header, a wrong key (invalid_token), on every
// tenant route, /mcp included.
func TestServer_unauthorized_wwwAuthenticate(t *testing.T) {
	ts := newServer(t, nil)
	for _, c := range []struct{ name, method, path, auth, want string }{
		{"missing", "GET", "/v1/tools", "", `Bearer realm="ptcx"`},
		{"basic", "GET", "/v1/tools", "Basic dXNlcjpwYXNz", `Bearer realm="ptcx"`},
		{"empty bearer", "POST", "/v1/executions", "Bearer ", `Bearer realm="ptcx"`},
		{"wrong key", "POST", "/v1/executions", "Bearer not-a-key", `Bearer realm="ptcx", error="invalid_token"`},
		{"mcp", "POST", "/mcp", "", `Bearer realm="ptcx"`},
		{"events", "GET", "/v1/executions/x/events", "Bearer nope", `Bearer realm="ptcx", error="invalid_token"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{}
			if c.auth != "" {
				hdr["Authorization"] = c.auth
			}
			status, body, h := send(t, c.method, ts.url+c.path, "", `{}`, hdr)
			require.Equal(t, 401, status, body)
			require.Equal(t, c.want, h.Get("WWW-Authenticate"))
			require.Contains(t, body, serve.CodeUnauthorized)
		})
	}
	// Other refusals carry no challenge.
	status, _, h := send(t, "GET", ts.url+"/v1/executions/nope", keyA, "", nil)
	require.Equal(t, 404, status)
	require.Empty(t, h.Get("WWW-Authenticate"))
}

// tracedServer is newServer with spans recorded in memory.
func tracedServer(t *testing.T) (*testServer, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return newServerWith(t, serve.Options{Runtime: testkit.Sandbox(t), TracerProvider: tp}, nil), rec
}

// endedSpan waits for the ended span whose request id is rid.
func endedSpan(t *testing.T, rec *tracetest.SpanRecorder, rid string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found sdktrace.ReadOnlySpan
	require.Eventually(t, func() bool {
		for _, s := range rec.Ended() {
			for _, a := range s.Attributes() {
				if a.Key == "ptcx.request_id" && a.Value.AsString() == rid {
					found = s
				}
			}
		}
		return found != nil
	}, 10*time.Second, 10*time.Millisecond)
	return found
}

func attr(s sdktrace.ReadOnlySpan, key attribute.Key) attribute.Value {
	for _, a := range s.Attributes() {
		if a.Key == key {
			return a.Value
		}
	}
	return attribute.Value{}
}

// A request is a server span, the child of its valid traceparent, named by
// its route and carrying the execution's id; its log lines name the trace.
// A malformed traceparent is ignored: the span is a root, the request
// served.
func TestServer_traceparent_serverSpans(t *testing.T) {
	ts, rec := tracedServer(t)
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	status, body, _ := send(t, "POST", ts.url+"/v1/executions", keyA, `{"code":"return 6 * 7"}`,
		map[string]string{"traceparent": "00-" + traceID + "-" + parentID + "-01", serve.RequestIDHeader: "traced-1"})
	require.Equal(t, 200, status, body)
	var st serve.ExecutionState
	require.NoError(t, json.Unmarshal([]byte(body), &st))

	s := endedSpan(t, rec, "traced-1")
	require.Equal(t, oteltrace.SpanKindServer, s.SpanKind())
	require.Equal(t, "POST /v1/executions", s.Name())
	require.Equal(t, traceID, s.SpanContext().TraceID().String())
	require.Equal(t, parentID, s.Parent().SpanID().String())
	require.True(t, s.Parent().IsRemote())
	require.Equal(t, st.ID, attr(s, "ptcx.execution.id").AsString())
	require.Equal(t, "a", attr(s, "ptcx.tenant").AsString())
	require.Equal(t, int64(200), attr(s, "http.response.status_code").AsInt64())
	require.Equal(t, "POST /v1/executions", attr(s, "http.route").AsString())
	require.Eventually(t, func() bool {
		for _, l := range logLines(t, ts, "request") {
			if l["request_id"] == "traced-1" {
				require.Equal(t, traceID, l["trace_id"])
				require.Equal(t, s.SpanContext().SpanID().String(), l["span_id"])
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond)

	// A GET names the execution of its path.
	status, _, _ = send(t, "GET", ts.url+"/v1/executions/"+st.ID, keyA, "", map[string]string{serve.RequestIDHeader: "traced-2"})
	require.Equal(t, 200, status)
	require.Equal(t, st.ID, attr(endedSpan(t, rec, "traced-2"), "ptcx.execution.id").AsString())

	for i, bad := range []string{
		"garbage",
		"00-" + traceID + "-" + parentID, // no flags
		"00-00000000000000000000000000000000-" + parentID + "-01", // zero trace id
		"00-" + traceID + "-0000000000000000-01",                  // zero span id
		"ff-" + traceID + "-" + parentID + "-01",                  // version ff
		"00-" + strings.ToUpper(traceID) + "-" + parentID + "-01", // upper case
		"00-" + traceID + "-" + parentID + "-01-" + strings.Repeat("x", 4000),
	} {
		rid := "bad-" + string(rune('a'+i))
		status, body, _ := send(t, "POST", ts.url+"/v1/executions", keyA, `{"code":"return 1"}`,
			map[string]string{"traceparent": bad, serve.RequestIDHeader: rid})
		require.Equal(t, 200, status, "%s: %s", bad, body)
		s := endedSpan(t, rec, rid)
		require.False(t, s.Parent().IsValid(), "a malformed traceparent %q is ignored: the span is a root", bad)
		require.NotEqual(t, traceID, s.SpanContext().TraceID().String())
	}

	// Unknown routes are spans too, under a bounded name.
	status, _, _ = send(t, "GET", ts.url+"/no/such/thing", "", "", map[string]string{serve.RequestIDHeader: "traced-404"})
	require.Equal(t, 404, status)
	s = endedSpan(t, rec, "traced-404")
	require.Equal(t, "unknown", s.Name())
}

// /mcp reports the binary's version (Options.Version, which `ptcx serve`
// sets as `ptcx version` prints it); without one, mcpserver's default.
func TestServer_mcp_reportsTheVersion(t *testing.T) {
	for _, c := range []struct{ given, want string }{{"v1.2.3-4-gabcdef0", "v1.2.3-4-gabcdef0"}, {"", mcpserver.DefaultVersion}} {
		ts := newServerWith(t, serve.Options{Runtime: testkit.Sandbox(t), Version: c.given}, nil)
		cl := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
		cs, err := cl.Connect(ctx(t), &mcp.StreamableClientTransport{Endpoint: ts.url + "/mcp", HTTPClient: &http.Client{Transport: bearer{keyA}}}, nil)
		require.NoError(t, err)
		info := cs.InitializeResult().ServerInfo
		require.Equal(t, "ptcx serve", info.Name)
		require.Equal(t, c.want, info.Version)
		require.NoError(t, cs.Close())
	}
}
