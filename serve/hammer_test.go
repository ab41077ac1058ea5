package serve_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// TestServer_toolResults_hammer posts the same call's result from many
// goroutines at once, with different values, while others read the state
// and stream the events: exactly one value reaches the program.
func TestServer_toolResults_hammer(t *testing.T) {
	ts := newServer(t, nil)
	c := ts.client(keyA)
	st, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `return await tools.ask({q: "x"})`, ClientTools: []serve.ClientTool{askTool}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status)
	call := st.Pending[0].ID

	const n = 32
	var wg sync.WaitGroup
	errs := make(chan error, 3*n)
	for i := range n {
		wg.Add(3)
		go func() {
			defer wg.Done()
			_, err := c.ToolResults(ctx(t), st.ID, serve.ToolResult{ID: call, OK: true, Value: json.RawMessage(fmt.Sprint(i))})
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := c.Get(ctx(t), st.ID, false)
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := c.Events(ctx(t), st.ID, 0)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	final, err := c.Get(ctx(t), st.ID, true)
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, final.Status)
	events, err := c.Events(ctx(t), st.ID, 0)
	require.NoError(t, err)
	received := 0
	for _, e := range events {
		if e.Type == serve.EventResult {
			received++
		}
	}
	require.Equal(t, 1, received, "exactly one result was delivered")
}
