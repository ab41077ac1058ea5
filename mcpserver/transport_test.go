package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpserver"
)

// rawClient talks newline-delimited JSON-RPC to a server over pipes, the way
// a client that started `ptcx mcp` would over its stdin and stdout.
type rawClient struct {
	t     *testing.T
	w     *io.PipeWriter
	lines chan string
}

func newRawClient(t *testing.T, f *fixture, scope string) *rawClient {
	t.Helper()
	srv, err := mcpserver.New(f.exec, scope, mcpserver.Options{})
	require.NoError(t, err)
	inR, inW := io.Pipe()   // client → server
	outR, outW := io.Pipe() // server → client
	ss, err := srv.Connect(context.Background(), mcpserver.StdioTransport(inR, outW), nil)
	require.NoError(t, err)
	c := &rawClient{t: t, w: inW, lines: make(chan string)}
	go func() {
		defer close(c.lines)
		r := bufio.NewReader(outR)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			c.lines <- line
		}
	}()
	t.Cleanup(func() {
		require.NoError(t, inW.Close())
		_ = ss.Wait()
		_ = outR.Close()
	})
	return c
}

func (c *rawClient) send(line string) {
	c.t.Helper()
	_, err := io.WriteString(c.w, line+"\n")
	require.NoError(c.t, err)
}

// reply is one JSON-RPC response as the client reads it.
type reply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// next reads the next message the server writes. A server that never
// answers is a bug, so the bound is generous rather than tight.
func (c *rawClient) next() reply {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		require.True(c.t, ok, "the server closed its output")
		require.True(c.t, strings.HasSuffix(line, "\n"))
		var r reply
		require.NoError(c.t, json.Unmarshal([]byte(line), &r), line)
		require.Equal(c.t, "2.0", r.JSONRPC, line)
		return r
	case <-time.After(10 * time.Second):
		c.t.Fatal("the server did not answer")
		return reply{}
	}
}

const initialize = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

func TestStdioTransport_keepsServingAfterMalformedMessages(t *testing.T) {
	f := newFixture(t, executor.NewConfig())
	c := newRawClient(t, f, "ptc")

	type want struct {
		id      string // the reply's id as JSON
		code    int64  // 0: a result
		message string // a substring of the error message, or of the result
	}
	steps := []struct {
		name string
		send string
		want *want // nil: no reply (a blank line, a notification)
	}{
		{"not JSON", "hello, this is not JSON", &want{"null", -32700, "not JSON"}},
		{"truncated JSON", `{"jsonrpc":"2.0","id":1,"method":`, &want{"null", -32700, "not JSON"}},
		{"two values on a line", `{} {}`, &want{"null", -32700, "not JSON"}},
		{"blank line", "   ", nil},
		{"a number", "42", &want{"null", -32600, "JSON object"}},
		{"a batch", `[{"jsonrpc":"2.0","id":2,"method":"ping"}]`, &want{"null", -32600, "batches are not supported"}},
		{"not JSON-RPC", `{"foo":"bar"}`, &want{"null", -32600, "invalid request"}},
		{"method not a string", `{"jsonrpc":"2.0","id":3,"method":5}`, &want{"3", -32600, "invalid request"}},
		{"id an object", `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, &want{"null", -32600, "invalid request"}},
		{"call before initialize", `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, &want{"4", -1, "initialization"}},
		{"unknown method", `{"jsonrpc":"2.0","id":5,"method":"no/such/method"}`, &want{"5", -1, "no/such/method"}},
		{"too long", `"` + strings.Repeat("x", mcpserver.MaxLineBytes) + `"`, &want{"null", -32600, "over"}},

		{"initialize", initialize, &want{`"init"`, 0, `"serverInfo":{"name":"ptcx"`}},
		{"initialized", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil},

		{"garbage after initialize", `}{`, &want{"null", -32700, "not JSON"}},
		{"batch after initialize", `[{"jsonrpc":"2.0","id":6,"method":"ping"}]`, &want{"null", -32600, "batches"}},
		{"bad params", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"oops"}`, &want{"7", -32602, ""}},
		{"tools/list", `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, &want{"8", 0, `"name":"run_code"`}},
		{"collapsed call", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"write","arguments":{"path":"a","content":"b"}}}`,
			&want{"9", 0, `UNKNOWN_TOOL: unknown tool \"write\": only run_code is callable directly`}},
		{"ping", `{"jsonrpc":"2.0","id":10,"method":"ping"}`, &want{"10", 0, "{}"}},
	}
	for _, s := range steps {
		c.send(s.send)
		if s.want == nil {
			continue
		}
		r := c.next()
		require.JSONEq(t, s.want.id, string(r.ID), s.name)
		switch s.want.code {
		case 0:
			require.Nil(t, r.Error, s.name)
			require.Contains(t, string(r.Result), s.want.message, s.name)
		default:
			require.NotNil(t, r.Error, s.name)
			if s.want.code != -1 { // -1: any code
				require.Equal(t, s.want.code, r.Error.Code, s.name)
			}
			require.Contains(t, r.Error.Message, s.want.message, s.name)
		}
	}
	require.Zero(t, f.writes.Load())
}
