package serve_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
)

// effectTools writes a tools file whose one command tool, effect,
// appends its arguments to out as one line (one write, so lines of
// concurrent calls never mix), and returns the file's path.
func effectTools(t testing.TB, out string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tools.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"tools": [{
		"name": "effect", "description": "Append the arguments to a file: a side effect.",
		"input_schema": {"type": "object"}, "concurrency_safe": true,
		"command": ["sh", "-c", "line=$(cat); printf '%s\\n' \"$line\" >> \"$OUT\"; echo null"],
		"env": {"set": {"OUT": `+quoteJSON(out)+`}}
	}]}`), 0o600))
	return path
}

func quoteJSON(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// effects are the lines effect appended to out.
func effects(t testing.TB, out string) []string {
	t.Helper()
	b, err := os.ReadFile(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(b))
}

// within polls cond every 50 ms, at most d, and fails the test past it.
func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A node that cannot renew its lease stops what it runs at lease − margin;
// once another node declared the execution lost (lease + margin), every
// node, the fenced one included, answers NODE_LOST from the store, and the
// fenced node starts nothing until it renews again.
func TestCluster_fencedNode_answersFromTheStore(t *testing.T) {
	out := filepath.Join(t.TempDir(), "effects")
	tools := effectTools(t, out)
	nodes := newNodes(t, 2, func(_ int, c *serve.Config) { c.Tools = tools })
	c1, c2 := nodes[0].client(keyA), nodes[1].client(keyA)
	st, err := c1.Execute(ctx(t), serve.ExecutionRequest{Wait: boolp(false),
		Code: `for (let i = 0; i < 400; i++) { await tools.effect({n: i}); await new Promise(r => setTimeout(r, 25)) } return "done"`})
	require.NoError(t, err)
	within(t, 5*time.Second, "the program's first effect", func() bool { return len(effects(t, out)) > 0 })

	resume := serve.StallRenewals(nodes[0].srv)
	defer resume()
	var lost []string
	within(t, 10*time.Second, "node 2 declares the execution lost", func() bool {
		got, err := c2.Get(ctx(t), st.ID, false)
		require.NoError(t, err)
		if got.Status == serve.StatusRunning {
			return false
		}
		lost = effects(t, out)
		require.Equal(t, serve.StatusFailed, got.Status)
		require.Equal(t, string(api.CodeNodeLost), got.Error.Code)
		return true
	})
	time.Sleep(300 * time.Millisecond) // the program's loop would have called effect more than ten times
	require.Equal(t, lost, effects(t, out), "no side effect after NODE_LOST")

	for i, c := range []*client.Client{c1, c2} {
		got, err := c.Get(ctx(t), st.ID, false)
		require.NoError(t, err)
		require.Equal(t, serve.StatusFailed, got.Status, "node %d", i+1)
		require.Equal(t, string(api.CodeNodeLost), got.Error.Code, "node %d answers the store's outcome, not its copy's", i+1)
	}
	_, err = c1.Cancel(ctx(t), st.ID)
	require.Equal(t, http.StatusConflict, apiErr(t, err).Status, "settled, as the store says")

	_, err = c1.Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
	e := apiErr(t, err)
	require.Equal(t, http.StatusServiceUnavailable, e.Status, "no new work while fenced")
	require.Equal(t, serve.CodeStoreUnavailable, e.Body.Code)
	require.Contains(t, e.Body.Message, "cannot prove its cluster lease is current")
	status, _, _ := raw(t, "GET", nodes[0].url+"/readyz", "", "")
	require.Equal(t, http.StatusServiceUnavailable, status, "the load balancer sends it nothing")

	resume()
	within(t, 5*time.Second, "node 1 takes work again once it renews", func() bool {
		got, err := c1.Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
		return err == nil && got.Status == serve.StatusCompleted
	})
	got, err := c1.Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	require.Equal(t, string(api.CodeNodeLost), got.Error.Code, "the lost execution stays lost")
	require.Equal(t, lost, effects(t, out))
}

// The owner of a parked execution that another node took over and
// completed while the owner could not renew its lease answers a retried
// post with the store's outcome, not its own stale copy's.
func TestCluster_fencedOwner_parkedExecutionAnswersTheStore(t *testing.T) {
	nodes := newNodes(t, 2, nil)
	c1, c2 := nodes[0].client(keyA), nodes[1].client(keyA)
	st := pendingOn(t, c1, askTwice)
	resume := serve.StallRenewals(nodes[0].srv)
	defer resume()

	within(t, 10*time.Second, "node 2 takes the parked execution over", func() bool {
		r, err := serve.Record(nodes[1].srv, st.ID)
		require.NoError(t, err)
		return r.Owner == "n2"
	})
	next, err := c2.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, next.Status, "%+v\n%s", next.Error, nodes[1].logs.String())
	second := answer(next.Pending[0].ID, "36")
	done, err := c2.ToolResults(ctx(t), st.ID, second)
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)

	resume()
	within(t, 5*time.Second, "node 1 renews", func() bool {
		_, err := c1.Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
		return err == nil
	})
	again, err := c1.ToolResults(ctx(t), st.ID, second)
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, again.Status, "%+v", again.Error)
	require.JSONEq(t, `"ada:36"`, string(again.Value))
	for i, c := range []*client.Client{c1, c2} {
		got, err := c.Get(ctx(t), st.ID, false)
		require.NoError(t, err)
		require.Equal(t, serve.StatusCompleted, got.Status, "node %d", i+1)
		require.JSONEq(t, `"ada:36"`, string(got.Value), "node %d", i+1)
	}
}

// A node whose lease lapsed and that nobody reaped meanwhile (it is the
// only one) settles what the lapse left once it renews: its running
// execution fails NODE_LOST, as another node would have failed it, and
// its parked one is reclaimed and continues.
func TestCluster_fencedNode_reclaimsWhatNobodyTookOver(t *testing.T) {
	nodes := newNodes(t, 1, nil)
	c := nodes[0].client(keyA)
	parked := pendingOn(t, c, askTwice)
	running, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 30000)); return 1`, Wait: boolp(false)})
	require.NoError(t, err)

	resume := serve.StallRenewals(nodes[0].srv)
	defer resume()
	within(t, 5*time.Second, "the lease lapses", func() bool {
		_, err := c.Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
		return err != nil && apiErr(t, err).Status == http.StatusServiceUnavailable
	})
	got, err := c.Get(ctx(t), running.ID, false)
	require.NoError(t, err)
	require.Equal(t, serve.StatusRunning, got.Status, "the store's record, as last written (the stopped copy here is not answered)")

	resume()
	within(t, 5*time.Second, "the node settles what the lapse left", func() bool {
		got, err := c.Get(ctx(t), running.ID, false)
		require.NoError(t, err)
		return got.Status != serve.StatusRunning
	})
	got, err = c.Get(ctx(t), running.ID, false)
	require.NoError(t, err)
	require.Equal(t, serve.StatusFailed, got.Status)
	require.Equal(t, string(api.CodeNodeLost), got.Error.Code)

	next, err := c.ToolResults(ctx(t), parked.ID, answer(parked.Pending[0].ID, "ada"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, next.Status, "%+v", next.Error)
	done, err := c.ToolResults(ctx(t), parked.ID, answer(next.Pending[0].ID, "36"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
}
