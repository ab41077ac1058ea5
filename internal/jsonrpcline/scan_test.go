package jsonrpcline

import (
	"encoding/json"
	"strings"
	"testing"

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
