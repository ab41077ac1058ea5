package cli

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
	"github.com/ptcx/ptcx/serve/store/storetest"
)

// serveNode is one `ptcx serve` process of a cluster test.
type serveNode struct {
	name string
	url  string
	kill func()
}

// startServeNode starts `ptcx serve` in a process of its own with a config
// sharing store, and waits for the address it logs.
func startServeNode(t *testing.T, name, store, keySum string) *serveNode {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), name+".json")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(
		`{"listen":"127.0.0.1:0","store":%q,"node":%q,"lease":"1s","tenants":[{"name":"t","key_sha256":%q,"mode":"ptc"}]}`,
		store, name, keySum)), 0o600))
	cmd := child(t, "serve", "--config", cfg)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	addr := make(chan string, 1)
	go func() {
		defer close(exited)
		re := regexp.MustCompile(`"msg":"serving","addr":"([^"]+)"`)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		_ = cmd.Wait()
	}()
	n := &serveNode{name: name, kill: func() {
		_ = cmd.Process.Kill()
		<-exited
	}}
	t.Cleanup(n.kill)
	select {
	case a := <-addr:
		n.url = "http://" + a
	case <-exited:
		t.Fatalf("ptcx serve %s exited before serving", name)
	case <-time.After(60 * time.Second):
		t.Fatalf("ptcx serve %s did not log its address within 60 s", name)
	}
	return n
}

// The cluster as the issue draws it, in processes: three `ptcx serve`
// nodes on one embedded NATS server. An execution created on node 1 is
// answered through node 2 and streamed from node 3; node 1 is then killed
// (SIGKILL) while it owns a parked execution, and node 2 completes it with
// the right result once node 1's lease has expired (503 and Retry-After
// until then).
func TestServe_clusterOfProcesses(t *testing.T) {
	testkit.RequireGuest(t)
	store := "nats://" + storetest.NATS(t, nil).Addr().String()
	key := "cluster-process-key"
	sum := sha256.Sum256([]byte(key))
	keySum := hex.EncodeToString(sum[:])
	nodes := make([]*serveNode, 3)
	for i := range nodes {
		nodes[i] = startServeNode(t, fmt.Sprintf("n%d", i+1), store, keySum)
	}
	c1, c2, c3 := client.New(nodes[0].url, key, nil), client.New(nodes[1].url, key, nil), client.New(nodes[2].url, key, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ask := serve.ClientTool{Name: "ask", Description: "Ask the user.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)}
	pending := func(c *client.Client) *serve.ExecutionState {
		st, err := c.Execute(ctx, serve.ExecutionRequest{Code: `const a = await tools.ask({q: "name?"}); return "hello " + a`, ClientTools: []serve.ClientTool{ask}})
		require.NoError(t, err)
		require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)
		require.Len(t, st.Pending, 1)
		return st
	}
	answer := func(st *serve.ExecutionState, v string) serve.ToolResult {
		return serve.ToolResult{ID: st.Pending[0].ID, OK: true, Value: json.RawMessage(`"` + v + `"`)}
	}

	first := pending(c1)
	done, err := c2.ToolResults(ctx, first.ID, answer(first, "ada"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"hello ada"`, string(done.Value))
	events, err := c3.Events(ctx, first.ID, 0)
	require.NoError(t, err)
	require.NotEmpty(t, events)
	require.Equal(t, serve.EventPending, events[0].Type)
	require.Equal(t, serve.EventDone, events[len(events)-1].Type, "node 3 streams the execution to its end")

	second := pending(c1)
	nodes[0].kill()
	saw503 := false
	for {
		got, err := c2.ToolResults(ctx, second.ID, answer(second, "grace"))
		var e *client.Error
		if errors.As(err, &e) && e.Status == http.StatusServiceUnavailable {
			require.NotEmpty(t, e.RetryAfter, "a 503 says when to retry")
			saw503 = true
			time.Sleep(200 * time.Millisecond)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, serve.StatusCompleted, got.Status, "%+v", got.Error)
		require.JSONEq(t, `"hello grace"`, string(got.Value), "node 2 resumed node 1's parked program")
		break
	}
	t.Logf("node 1 killed while it owned a parked execution; node 2 completed it (503 until the lease expired: %v)", saw503)
	again, err := c3.Get(ctx, second.ID, false)
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, again.Status, "node 3 sees the result")
}
