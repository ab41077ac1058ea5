// Command thinclient is the smallest useful client of `ptcx serve`: it runs
// one program, answering its client-side calls. TestClient_linksNoServer
// builds it and reads its module list: it must link none of the server.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/ptcx/ptcx/serve/client"
	"github.com/ptcx/ptcx/serve/protocol"
)

func main() {
	c := client.New(os.Getenv("PTCX_URL"), os.Getenv("PTCX_KEY"), nil)
	req := protocol.ExecutionRequest{
		Code: `const name = await tools.ask({question: "name?"}); return "hello, " + name;`,
		ClientTools: []protocol.ClientTool{{
			Name: "ask", Description: "Asks the user.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"}}}`),
		}},
	}
	st, err := c.Run(context.Background(), req, client.RunOptions{
		Answer: func(_ context.Context, calls []protocol.PendingCall) ([]protocol.ToolResult, error) {
			out := make([]protocol.ToolResult, len(calls))
			for i, call := range calls {
				out[i] = protocol.ToolResult{ID: call.ID, OK: true, Value: json.RawMessage(`"Ada"`)}
			}
			return out, nil
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(st.Text)
}
