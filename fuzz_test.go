package ptcx_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptcx/ptcx"
	"github.com/stretchr/testify/require"
)

// fuzzWire checks a decoder on any bytes: it never panics; a payload it
// reads gives calls that either will run (an id and a name) or carry an
// INVALID_ARGS problem; executing each gives a result that answers the
// call's id; and the reply always encodes.
func fuzzWire(f *testing.F, format string) {
	paths, err := filepath.Glob(filepath.Join("testdata", "wire", format+"_*.json"))
	require.NoError(f, err)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, s := range []string{``, `null`, `[]`, `{}`, `[null]`, `[[]]`, `{"content":"x"}`, `{"choices":[{"message":null}]}`,
		`{"type":"function_call","call_id":"c","name":"add","arguments":"[1]"}`, `{"id":"c","function":{"name":"add","arguments":"{"}}`,
		`{"type":"tool_use","id":"t","name":"add","input":7}`, `{"output":[{"type":"function_call","call_id":{},"name":[]}]}`} {
		f.Add([]byte(s))
	}
	wf := wireFormats[format]
	h, err := ptcx.New(context.Background(), ptcx.WithCodeRuntime(noSandbox{}), ptcx.WithTools(addTool))
	require.NoError(f, err)
	f.Cleanup(func() { _ = h.Close(context.Background()) })
	f.Fuzz(func(t *testing.T, payload []byte) {
		calls, err := wf.decode(payload)
		if err != nil {
			require.Nil(t, calls)
			require.True(t, strings.HasPrefix(err.Error(), "ptcx: the "), err.Error())
			return
		}
		results := make([]ptcx.Result, len(calls))
		for i, c := range calls {
			if p := c.Problem(); p != nil {
				require.Equal(t, "INVALID_ARGS", string(p.Code))
				require.NotEmpty(t, p.Message)
			} else {
				require.NotEmpty(t, c.ID)
				require.NotEmpty(t, c.Name)
			}
			results[i] = h.Execute(context.Background(), c)
			require.Equal(t, c.ID, results[i].ID)
			require.True(t, results[i].Err != nil || c.Problem() == nil)
		}
		_, err = json.Marshal(wf.encode(results))
		require.NoError(t, err)
	})
}

func FuzzOpenAICalls(f *testing.F)    { fuzzWire(f, "openai") }
func FuzzResponsesCalls(f *testing.F) { fuzzWire(f, "responses") }
func FuzzAnthropicCalls(f *testing.F) { fuzzWire(f, "anthropic") }
