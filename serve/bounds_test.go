package serve_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

func TestDecodeExecutionRequest_clientToolsBound(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int
		ok   bool
	}{{"below", serve.DefaultMaxClientTools - 1, true}, {"at", serve.DefaultMaxClientTools, true}, {"past", serve.DefaultMaxClientTools + 1, false}} {
		t.Run(tt.name, func(t *testing.T) {
			tools := make([]string, tt.n)
			for i := range tools {
				tools[i] = fmt.Sprintf(`{"name":"t%d","input_schema":{"type":"object"}}`, i)
			}
			_, err := serve.DecodeExecutionRequest([]byte(`{"code":"return 1","client_tools":[` + strings.Join(tools, ",") + `]}`))
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, fmt.Sprintf("field client_tools: %d tools is over the maximum of %d", tt.n, serve.DefaultMaxClientTools))
		})
	}
}

// An idempotency_key is at most MaxIdempotencyKeyBytes of printable text:
// at, below and past the bound (in bytes, a multi-byte character counted
// as its bytes), and control characters, escaped or not, refused.
func TestDecodeExecutionRequest_idempotencyKeyBound(t *testing.T) {
	n := serve.MaxIdempotencyKeyBytes
	for _, tt := range []struct {
		name string
		key  string
		want string // "" when accepted
	}{
		{"empty", "", ""},
		{"below", strings.Repeat("k", n-1), ""},
		{"at", strings.Repeat("k", n), ""},
		{"at, multi-byte", strings.Repeat("é", n/2), ""},
		{"past", strings.Repeat("k", n+1), fmt.Sprintf("field idempotency_key: %d bytes, over the limit of %d", n+1, n)},
		{"past, multi-byte", strings.Repeat("é", n/2) + "k", fmt.Sprintf("field idempotency_key: %d bytes, over the limit of %d", n+1, n)},
		{"a client's retry key", "order-42#3", ""},
		{"newline", `a\nb`, "field idempotency_key: a control character (U+000A) at byte 1"},
		{"NUL", `\u0000`, "field idempotency_key: a control character (U+0000) at byte 0"},
		{"DEL, raw", "\u007f", "field idempotency_key: a control character (U+007F)"},
		{"C1, escaped", `\u0085`, "field idempotency_key: a control character (U+0085)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := serve.DecodeExecutionRequest([]byte(`{"code":"return 1","idempotency_key":"` + tt.key + `"}`))
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestServer_maxEvents(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Server.MaxEvents = 3 })
	c := ts.client(keyA)
	for _, tt := range []struct {
		name    string
		calls   int
		kept    int // events before done
		dropped int
	}{
		{"below", 1, 2, 0}, // call_started, call_finished
		{"past", 3, 3, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: fmt.Sprintf(`for (let i = 0; i < %d; i++) await tools.list({}); return 1`, tt.calls)})
			require.NoError(t, err)
			require.Equal(t, serve.StatusCompleted, st.Status)
			require.Equal(t, tt.calls, st.Stats.Calls, "stats count every call")
			events, err := c.Events(ctx(t), st.ID, 0)
			require.NoError(t, err)
			require.Len(t, events, tt.kept+1)
			done := events[len(events)-1]
			require.Equal(t, serve.EventDone, done.Type, "done is always kept")
			var d struct {
				Dropped int `json:"dropped_events"`
			}
			require.NoError(t, json.Unmarshal(done.Data, &d))
			require.Equal(t, tt.dropped, d.Dropped)
		})
	}
}

func TestServer_maxRetained(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Server.MaxRetained = 2 })
	c := ts.client(keyA)
	var ids []string
	for range 3 {
		st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
		require.NoError(t, err)
		ids = append(ids, st.ID)
	}
	_, err := c.Get(ctx(t), ids[0], false)
	require.Equal(t, 404, apiErr(t, err).Status, "past the bound the oldest settled execution is gone")
	for _, id := range ids[1:] {
		_, err := c.Get(ctx(t), id, false)
		require.NoError(t, err, "at the bound the newest are kept")
	}
}

func TestServer_maxWait(t *testing.T) {
	ts := newServer(t, func(c *serve.Config) { c.Server.MaxWaitMS = 200 })
	c := ts.client(keyA)
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 1500)); return "late"`})
	require.NoError(t, err)
	require.Equal(t, serve.StatusRunning, st.Status, "past max_wait_ms the answer is running")
	fast, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `return "now"`})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, fast.Status, "within max_wait_ms the answer is the result")
}
