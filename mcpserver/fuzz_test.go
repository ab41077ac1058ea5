package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/require"
)

// FuzzLineGuard feeds arbitrary client input to the stdio guard: it must
// never panic, hand the SDK only lines that are one JSON-RPC message each,
// and answer everything else with valid JSON-RPC error responses.
func FuzzLineGuard(f *testing.F) {
	for _, s := range []string{
		"",
		"garbage\n",
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n",
		`{"jsonrpc":"2.0","id":{"a":1},"method":5}` + "\r\n  \n42\n{} {}\n",
		`{"jsonrpc":"2.0","id":"x","result":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var replies bytes.Buffer
		g := &lineGuard{src: bufio.NewReader(bytes.NewReader(in)), closer: io.NopCloser(nil), reply: &replies}
		passed, err := io.ReadAll(g)
		require.NoError(t, err)
		for _, line := range bytes.Split(bytes.TrimSuffix(passed, []byte("\n")), []byte("\n")) {
			if len(passed) == 0 {
				break
			}
			_, err := jsonrpc.DecodeMessage(line)
			require.NoError(t, err, "passed %q", line)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(replies.Bytes(), []byte("\n")), []byte("\n")) {
			if replies.Len() == 0 {
				break
			}
			var r struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *jsonrpc.Error  `json:"error"`
			}
			require.NoError(t, json.Unmarshal(line, &r), "reply %q", line)
			require.Equal(t, "2.0", r.JSONRPC)
			require.NotNil(t, r.Error)
			require.NotEmpty(t, r.ID)
		}
	})
}
