package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpserver"
)

// runCodeCall is a tools/call of run_code with id (JSON) running code.
func runCodeCall(id, code string) string {
	args, _ := json.Marshal(map[string]string{"code": code, "description": "test"})
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"run_code","arguments":%s}}`, id, args)
}

const (
	slowProgram = `await new Promise((r) => setTimeout(r, 300)); return "slow"`
	fastProgram = `return "fast"`
)

// Over stdio, a request that reuses the id of one not answered yet is
// answered at once with an error naming the id; the first is answered as
// usual, and its id may be used again once it is.
func TestStdioTransport_reusedIDInFlight(t *testing.T) {
	f := newFixture(t, executor.NewConfig().WithRuntime(sharedRuntime(t)))
	c := newRawClient(t, f, "ptc")
	c.send(initialize)
	require.Nil(t, c.next().Error)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	for _, id := range []string{`7`, `"seven"`} {
		t.Run(id, func(t *testing.T) {
			c.send(runCodeCall(id, slowProgram))
			c.send(runCodeCall(id, fastProgram))
			refused := c.next()
			require.JSONEq(t, id, string(refused.ID))
			require.NotNil(t, refused.Error, "the second is refused first: %s", refused.Result)
			require.Equal(t, int64(-32600), refused.Error.Code)
			require.Contains(t, refused.Error.Message, "request id "+id+" is already in flight")

			first := c.next()
			require.JSONEq(t, id, string(first.ID))
			require.Nil(t, first.Error)
			require.Contains(t, string(first.Result), `"result":"slow"`)

			c.send(runCodeCall(id, fastProgram))
			again := c.next()
			require.JSONEq(t, id, string(again.ID))
			require.Nil(t, again.Error, "an answered id may be reused")
			require.Contains(t, string(again.Result), `"result":"fast"`)
		})
	}
}

// mcpPost posts body to an MCP endpoint as a client of protocol 2025-03-26
// (the last with batches) and returns the status and the body.
func mcpPost(t *testing.T, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// Over Streamable HTTP, a batch that reuses a request's id gets a response
// for every request: the SDK answers the first, the guard the repeat.
func TestGuardHTTP_reusedIDInABatch(t *testing.T) {
	f := newFixture(t, executor.NewConfig().WithRuntime(sharedRuntime(t)))
	srv, err := mcpserver.New(f.exec, "ptc", mcpserver.Options{})
	require.NoError(t, err)
	batch := "[" + runCodeCall("7", slowProgram) + "," + runCodeCall("7", fastProgram) + "," + runCodeCall(`"x"`, fastProgram) +
		`,{"jsonrpc":"2.0","method":"notifications/initialized"}]`
	for _, jsonMode := range []bool{true, false} {
		t.Run(fmt.Sprintf("JSONResponse %v", jsonMode), func(t *testing.T) {
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
				&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: jsonMode})
			ts := httptest.NewServer(mcpserver.GuardHTTP(h, 1<<20))
			defer ts.Close()

			status, body := mcpPost(t, ts.URL, batch)
			require.Equal(t, http.StatusOK, status, body)
			var replies []reply
			if jsonMode {
				require.NoError(t, json.Unmarshal([]byte(body), &replies), body)
			} else {
				for _, line := range strings.Split(body, "\n") {
					if data, ok := strings.CutPrefix(line, "data: "); ok {
						var r reply
						require.NoError(t, json.Unmarshal([]byte(data), &r), data)
						replies = append(replies, r)
					}
				}
			}
			require.Len(t, replies, 3, body)
			byID := map[string][]reply{}
			for _, r := range replies {
				byID[string(r.ID)] = append(byID[string(r.ID)], r)
			}
			require.Len(t, byID["7"], 2, body)
			var answered, refused int
			for _, r := range byID["7"] {
				if r.Error != nil {
					refused++
					require.Equal(t, int64(-32600), r.Error.Code)
					require.Contains(t, r.Error.Message, "request id 7 is already in flight")
				} else {
					answered++
					require.Contains(t, string(r.Result), `"result":"slow"`, "the first request is the one answered")
				}
			}
			require.Equal(t, [2]int{1, 1}, [2]int{answered, refused})
			require.Len(t, byID[`"x"`], 1)
			require.Contains(t, string(byID[`"x"`][0].Result), `"result":"fast"`)

			status, body = mcpPost(t, ts.URL, "["+runCodeCall("7", fastProgram)+","+runCodeCall("8", fastProgram)+"]")
			require.Equal(t, http.StatusOK, status, body)
			require.NotContains(t, body, "in flight", "a batch without a repeat passes as it is")
			require.Contains(t, body, `"id":8`)
		})
	}
}

// Hammer: each of 100 ids sent twice at once, calls running concurrently
// (the reader adds ids while the SDK's writers end them): every request
// gets exactly one reply, a result or, for a repeat that came while its
// first was in flight, the in-flight error. Run under -race.
func TestStdioTransport_reusedIDInFlight_hammer(t *testing.T) {
	f := newFixture(t, executor.NewConfig())
	c := newRawClient(t, f, "native")
	c.send(initialize)
	require.Nil(t, c.next().Error)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	const ids = 100
	sent := make(chan error, 1)
	go func() { // written while the replies are read: the pipe holds none
		for i := range ids * 2 {
			line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"x":%d,"y":1}}}`, i/2, i)
			if _, err := io.WriteString(c.w, line+"\n"); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	replies := map[string]int{}
	for range 2 * ids {
		r := c.next()
		replies[string(r.ID)]++
		if r.Error != nil {
			require.Contains(t, r.Error.Message, "request id "+string(r.ID)+" is already in flight")
		} else {
			require.Contains(t, string(r.Result), `"structuredContent":{"sum":`)
		}
	}
	require.NoError(t, <-sent)
	require.Len(t, replies, ids)
	for id, n := range replies {
		require.Equal(t, 2, n, "id %s", id)
	}
}
