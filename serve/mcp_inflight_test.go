package serve_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A batch posted to /mcp that reuses a request's id gets a response for
// every request: the SDK answers the first, and the repeat an error
// naming the id (the SDK alone dropped it without a reply).
func TestServer_mcp_reusedIDInABatch(t *testing.T) {
	ts := newServer(t, nil)
	call := func(id, code string) string {
		c, _ := json.Marshal(code)
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"run_code","arguments":{"code":` +
			string(c) + `,"description":"d"}}}`
	}
	body := "[" + call("7", "await new Promise((r) => setTimeout(r, 300)); return 1") + "," + call("7", "return 2") + "]"
	req, err := http.NewRequest(http.MethodPost, ts.url+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+keyA)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-03-26") // the last version with batches
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(out))

	var replies []struct {
		ID     json.RawMessage `json:"id"`
		Result *struct {
			StructuredContent struct {
				Result json.RawMessage `json:"result"`
			} `json:"structuredContent"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(out, &replies), string(out))
	require.Len(t, replies, 2, string(out))
	for _, r := range replies {
		require.JSONEq(t, "7", string(r.ID))
	}
	require.NotNil(t, replies[0].Result, string(out))
	require.JSONEq(t, "1", string(replies[0].Result.StructuredContent.Result), "the first request is answered")
	require.NotNil(t, replies[1].Error, string(out))
	require.Equal(t, -32600, replies[1].Error.Code)
	require.Contains(t, replies[1].Error.Message, "request id 7 is already in flight")
}
