package serve_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// TestServer_strictJSON_refused posts bodies that encoding/json would take
// with a silent choice (the last of two keys, U+FFFD, Infinity): each is a
// 400 naming the place, and a pending execution stays as it was.
func TestServer_strictJSON_refused(t *testing.T) {
	ts := newServer(t, nil)
	st := pendingOn(t, ts.client(keyA), `return await tools.ask({q: "x"})`)
	results := "/v1/executions/" + st.ID + "/tool_results"
	call := st.Pending[0].ID
	result := func(value string) string {
		return `{"results":[{"id":"` + call + `","ok":true,"value":` + value + `}]}`
	}
	tests := []struct {
		name, path, body string
		want             []string
	}{
		{"a duplicate code", "/v1/executions", `{"code": "return 'first'", "code": "return 'second'"}`,
			[]string{"line 1, column 28: at code: the key \"code\" appears twice"}},
		{"a duplicate key in a client tool's schema", "/v1/executions",
			`{"code":"return 1","client_tools":[{"name":"t","input_schema":{"type":"object","type":"string"}}]}`,
			[]string{"at client_tools[0].input_schema.type: the key \"type\" appears twice"}},
		{"a duplicate key in an output schema", "/v1/executions",
			`{"code":"return 1","client_tools":[{"name":"t","input_schema":{"type":"object"},"output_schema":{"properties":{"a":{},"a":{}}}}]}`,
			[]string{"at client_tools[0].output_schema.properties.a: the key \"a\" appears twice"}},
		{"invalid UTF-8 in code", "/v1/executions", "{\"code\":\"return '\xff'\"}", []string{"at code: the string is not UTF-8"}},
		{"a lone surrogate in code", "/v1/executions", `{"code":"return '\ud800'"}`, []string{`at code: the string has a lone surrogate, \ud800`}},
		{"a duplicate key in a result", results, result(`{"a":{"b":1,"b":2}}`),
			[]string{"at results[0].value.a.b: the key \"b\" appears twice"}},
		{"a number out of range in a result", results, result(`{"n":1e400}`),
			[]string{"at results[0].value.n: the number 1e400 is out of range"}},
		{"a duplicate result field", results, `{"results":[{"id":"` + call + `","ok":true,"ok":false}]}`,
			[]string{"at results[0].ok: the key \"ok\" appears twice"}},
		{"a lone surrogate in an error message", results, `{"results":[{"id":"` + call + `","ok":false,"error":{"message":"\udc00"}}]}`,
			[]string{"at results[0].error.message: the string has a lone surrogate"}},
		{"a duplicate key in a call's arguments", "/v1/calls", `{"name":"list","arguments":{"path":".","path":"/etc"}}`,
			[]string{"at arguments.path: the key \"path\" appears twice"}},
		{"nesting past the limit", results, result(strings.Repeat("[", 1000) + strings.Repeat("]", 1000)),
			[]string{"nests deeper than 1000 levels"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, _ := raw(t, "POST", ts.url+tt.path, keyA, tt.body)
			require.Equal(t, 400, status, body)
			var env serve.ErrorEnvelope
			require.NoError(t, json.Unmarshal([]byte(body), &env))
			require.Equal(t, serve.CodeBadRequest, env.Error.Code)
			for _, w := range tt.want {
				require.Contains(t, env.Error.Message, w)
			}
		})
	}

	got, err := ts.client(keyA).Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, got.Status, "no refused post reached the program")
	require.Equal(t, st.Pending, got.Pending)
	status, body, _ := raw(t, "POST", ts.url+results, keyA, result(`{"a":{"b":1},"n":1e308,"s":"\ud83d\ude00"}`))
	require.Equal(t, 200, status, body)
	done, err := ts.client(keyA).Get(ctx(t), st.ID, true)
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `{"a":{"b":1},"n":1e308,"s":"😀"}`, string(done.Value))
}

// TestCluster_strictJSON_refusedBeforeForwarding posts a result with a
// duplicate key to a node that does not own the execution: it is refused
// there, never forwarded, and the owner's execution waits on.
func TestCluster_strictJSON_refusedBeforeForwarding(t *testing.T) {
	nodes := newNodes(t, 2, nil)
	st := pendingOn(t, nodes[0].client(keyA), `return await tools.ask({q: "x"})`)
	status, body, _ := raw(t, "POST", nodes[1].url+"/v1/executions/"+st.ID+"/tool_results", keyA,
		`{"results":[{"id":"`+st.Pending[0].ID+`","ok":true,"value":{"a":1,"a":2}}]}`)
	require.Equal(t, 400, status, body)
	require.Contains(t, body, `at results[0].value.a: the key \"a\" appears twice`)

	got, err := nodes[0].client(keyA).Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, got.Status)
	require.Equal(t, st.Pending, got.Pending)
	done, err := nodes[1].client(keyA).ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ok"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"ok"`, string(done.Value))
}
