package jsonrpcline

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/require"
)

func TestScan(t *testing.T) {
	tests := []struct {
		line string
		want Members
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, Members{Method: true, ID: true}, true},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":1}}`, Members{Method: true}, true},
		{`{"jsonrpc":"2.0","id":"x","result":{"method":"no","id":2}}`, Members{ID: true}, true},
		{`{"params":[{"method":1},"id"],"method":"m"}`, Members{Method: true}, true},
		{`{"method":"a\"id\"","x":"\\"}`, Members{Method: true}, true},
		{` {"method":"m"}`, Members{}, false},
		{`{"m\u0065thod":"m"}`, Members{}, false},
		{`{"method":`, Members{}, false},
		{`[{"method":"m"}]`, Members{}, false},
		{`"method"`, Members{}, false},
		{``, Members{}, false},
		{`{}`, Members{}, true},
		{`{"Method":"m","ID":1}`, Members{}, true},
	}
	for _, tt := range tests {
		m, ok := Scan([]byte(tt.line))
		require.Equal(t, tt.ok, ok, tt.line)
		require.Equal(t, tt.want, m, tt.line)
	}
	require.True(t, Members{Method: true}.Notification())
	require.False(t, Members{Method: true, ID: true}.Notification())
}

// FuzzScan checks Scan against a full decode: whenever it is sure, it saw
// exactly the top-level keys a decoder sees.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
		`{"a":[1,{"id":2}],"b":"\"method\"","id":null}`,
		`{"m\u0065thod":1}`,
		strings.Repeat("[", 50) + strings.Repeat("]", 50),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, ok := Scan(line)
		var obj map[string]json.RawMessage
		err := json.Unmarshal(line, &obj)
		if !ok {
			require.Equal(t, Members{}, m)
			return
		}
		require.NoError(t, err, "Scan was sure of %q", line)
		_, method := obj["method"]
		_, id := obj["id"]
		require.Equal(t, Members{Method: method, ID: id}, m, "%q", line)
	})
}

func TestResponseID(t *testing.T) {
	tests := []struct {
		msg string
		id  any // the id's value, nil when msg is not a response
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, int64(7)},
		{`{"jsonrpc":"2.0","id":7.0,"result":{}}`, int64(7)},
		{`{"jsonrpc":"2.0","result":{"id":1,"method":"m"},"id":"x"}`, "x"},
		{`{"jsonrpc":"2.0", "id" : "a,b}" , "error":{"code":-32600,"message":"m"}}`, "a,b}"},
		{`{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":12}`, int64(12)},
		{`{"jsonrpc":"2.0","id":7,"method":"ping"}`, nil},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":1}}`, nil},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}`, nil},
		{`{"jsonrpc":"2.0","id":{"a":1},"result":{}}`, nil},
		{`{"jsonrpc":"2.0","\u0069d":7,"result":{}}`, nil},
		{`[{"jsonrpc":"2.0","id":7,"result":{}}]`, nil},
		{``, nil},
	}
	for _, tt := range tests {
		id, ok := ResponseID([]byte(tt.msg))
		require.Equal(t, tt.id != nil, ok, tt.msg)
		if ok {
			require.Equal(t, tt.id, id.Raw(), tt.msg)
		}
	}
}

// FuzzResponseID checks ResponseID against the SDK's decoder on the
// messages it decodes: a response's id, and nothing for a request. On
// anything else it must only return.
func FuzzResponseID(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
		`{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","result":{"id":[1,{"id":2}]},"id":3}`,
		`{"id":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		id, ok := ResponseID(msg)
		if len(msg) == 0 || msg[0] != '{' {
			require.False(t, ok)
			return
		}
		m, err := jsonrpc.DecodeMessage(msg)
		if err != nil || !json.Valid(msg) {
			return
		}
		if _, escaped := Scan(msg); !escaped {
			return // a top-level key with an escape: the decoder reads it, ResponseID does not
		}
		switch m := m.(type) {
		case *jsonrpc.Response:
			require.True(t, ok, "%q", msg)
			require.Equal(t, m.ID, id, "%q", msg)
		default:
			require.False(t, ok, "%q", msg)
		}
	})
}
