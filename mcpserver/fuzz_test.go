package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"reflect"
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
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":1.0,"method":"ping"}` + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var replies bytes.Buffer
		g := &lineGuard{src: bufio.NewReader(bytes.NewReader(in)), closer: io.NopCloser(nil), reply: &replies, flight: &inFlight{}}
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

// FuzzSplitDuplicates feeds arbitrary POST bodies to GuardHTTP's reading of
// a batch: it must never panic; it changes nothing but a batch with a
// repeated request id, which it splits into the batch without the repeats
// (the other items as they were, in order) and an error response for each.
func FuzzSplitDuplicates(f *testing.F) {
	for _, s := range []string{
		`[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"}]`,
		`[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":7.0,"method":"ping"},{"jsonrpc":"2.0","id":"7","method":"ping"}]`,
		`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","method":"n"}]`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`, `[1, 1]`, `[`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		kept, refused := splitDuplicates(body)
		if refused == nil {
			require.Equal(t, body, kept)
			return
		}
		var in, out []json.RawMessage
		require.NoError(t, json.Unmarshal(body, &in))
		require.NoError(t, json.Unmarshal(kept, &out), "kept %q", kept)
		require.Equal(t, len(in), len(out)+len(refused))
		ids := map[jsonrpc.ID]bool{}
		j := 0
		for _, item := range in {
			var a, b any
			require.NoError(t, json.Unmarshal(item, &a))
			if j < len(out) {
				require.NoError(t, json.Unmarshal(out[j], &b))
			}
			if j < len(out) && reflect.DeepEqual(a, b) {
				j++
			}
		}
		require.Equal(t, len(out), j, "kept %q is not body %q less some items", kept, body)
		for _, item := range out {
			if m, err := jsonrpc.DecodeMessage(item); err == nil {
				if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
					require.False(t, ids[req.ID], "a repeated id kept in %q", kept)
					ids[req.ID] = true
				}
			}
		}
		for _, r := range refused {
			var e struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *jsonrpc.Error  `json:"error"`
			}
			require.NoError(t, json.Unmarshal(r, &e), "%q", r)
			require.Equal(t, "2.0", e.JSONRPC)
			require.NotNil(t, e.Error)
			require.Equal(t, int64(jsonrpc.CodeInvalidRequest), e.Error.Code)
		}
	})
}
