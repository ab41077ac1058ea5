package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
	"github.com/ptcx/ptcx/serve/store"
	"github.com/ptcx/ptcx/serve/store/storetest"
	"github.com/ptcx/ptcx/wasmhost"
)

// nodeEnv, set to a config file's path, makes TestCluster_pausedNode a
// `ptcx serve` node in a process of its own (the test binary, re-executed);
// cacheEnv names the compilation cache the parent filled, so that the
// nodes load the guest instead of compiling it each.
const (
	nodeEnv  = "PTCX_TEST_SERVE_NODE"
	cacheEnv = "PTCX_TEST_SERVE_NODE_CACHE"
)

// nodeProcess is one node of the cluster, in a process of its own.
type nodeProcess struct {
	name string
	cmd  *exec.Cmd
	url  string
	logs *lockedBuffer
}

// startNodeProcess starts the test binary as a node serving cfg (a JSON
// config), and waits for its address.
func startNodeProcess(t *testing.T, name string, cfg map[string]any) *nodeProcess {
	t.Helper()
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), name+".json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	cmd := exec.Command(os.Args[0], "-test.run=^TestCluster_pausedNode$", "-test.count=1")
	cmd.Env = append(os.Environ(), nodeEnv+"="+path, cacheEnv+"="+wasmhost.DefaultCacheDir())
	n := &nodeProcess{name: name, cmd: cmd, logs: &lockedBuffer{}}
	cmd.Stderr = n.logs
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = unpause(cmd.Process)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "NODE "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		n.url = "http://" + a
	case <-time.After(time.Minute):
		t.Fatalf("node %s did not start within a minute:\n%s", name, n.logs.String())
	}
	return n
}

// serveNode is the child's side: it serves the config nodeEnv names on
// loopback until it is killed or interrupted.
func serveNode(t *testing.T, path string) {
	cfg, err := serve.LoadConfig(path)
	require.NoError(t, err)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rt, err := wasmhost.New(ctx, wasmhost.NewConfig().WithCompilationCacheDir(os.Getenv(cacheEnv)))
	require.NoError(t, err)
	defer rt.Close(context.Background())
	srv, err := serve.New(ctx, cfg, serve.Options{Runtime: rt, Logger: slog.New(slog.NewJSONHandler(os.Stderr, nil))})
	require.NoError(t, err)
	defer srv.Close(context.Background())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	fmt.Printf("NODE %s\n", l.Addr())
	require.NoError(t, srv.Serve(ctx, l))
}

// A node process stopped (SIGSTOP) past its lease while it runs two
// programs calling a side-effect tool in a loop (one keep_state) and owns
// a parked execution: once another node reports NODE_LOST, no side effect
// is written anywhere, even after the node goes on (SIGCONT); every node
// reports one outcome for each execution; the parked one, taken over and
// completed by another node, is answered completed by the stopped node
// too, when a client retries its post there.
func TestCluster_pausedNode(t *testing.T) {
	if path := os.Getenv(nodeEnv); path != "" {
		serveNode(t, path)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("stops a process with SIGSTOP: Linux only")
	}
	testkit.Sandbox(t) // the guest, compiled once into the cache the node processes share
	ns := storetest.NATS(t, nil)
	out := filepath.Join(t.TempDir(), "effects")
	tools := effectTools(t, out)
	nodes := make([]*nodeProcess, 3)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("n%d", i+1)
			nodes[i] = startNodeProcess(t, name, map[string]any{
				"listen": "127.0.0.1:0", "store": ns.ClientURL(), "node": name, "lease": "1s", "tools": tools,
				"server":  map[string]any{"max_wait_ms": 3000},
				"tenants": []map[string]any{{"name": "a", "key_sha256": sum(keyA), "mode": "ptc"}},
			})
		}()
	}
	wg.Wait()
	clients := make([]*client.Client, len(nodes))
	for i, n := range nodes {
		clients[i] = client.New(n.url, keyA, nil)
	}
	victim, other := clients[0], clients[1]

	loop := func(tag string) string {
		return `for (let i = 0; i < 100; i++) { await tools.effect({tag: "` + tag + `", n: i}); await new Promise(r => setTimeout(r, 150)) } return "done"`
	}
	plain, err := victim.Execute(ctx(t), serve.ExecutionRequest{Code: loop("plain"), Wait: boolp(false)})
	require.NoError(t, err)
	kept, err := victim.Execute(ctx(t), serve.ExecutionRequest{Code: loop("kept"), Session: "s1", KeepState: true, Wait: boolp(false)})
	require.NoError(t, err)
	parked := pendingOn(t, victim, askTwice)
	tagged := func(tag string) int {
		n := 0
		for _, l := range effects(t, out) {
			if strings.Contains(l, `"tag":"`+tag+`"`) {
				n++
			}
		}
		return n
	}
	within(t, 10*time.Second, "both programs call the side-effect tool", func() bool { return tagged("plain") >= 2 && tagged("kept") >= 2 })

	require.NoError(t, pause(nodes[0].cmd.Process))
	stopped := time.Now()
	// The lines written when NODE_LOST is first seen, per execution.
	seen := map[string]int{}
	within(t, 15*time.Second, "another node reports both running executions NODE_LOST", func() bool {
		for tag, id := range map[string]string{"plain": plain.ID, "kept": kept.ID} {
			if _, ok := seen[tag]; ok {
				continue
			}
			got, err := other.Get(ctx(t), id, false)
			require.NoError(t, err)
			if got.Status != serve.StatusRunning {
				seen[tag] = tagged(tag)
				require.Equal(t, serve.StatusFailed, got.Status)
				require.Equal(t, string(api.CodeNodeLost), got.Error.Code)
			}
		}
		return len(seen) == 2
	})
	t.Logf("NODE_LOST seen %v after the stop", time.Since(stopped).Round(time.Millisecond))

	// Another node takes the parked execution over and completes it.
	records := openStore(t, ns.ClientURL())
	within(t, 10*time.Second, "another node takes the parked execution over", func() bool {
		r, err := records.Get(ctx(t), parked.ID)
		require.NoError(t, err)
		return r.Owner != "n1"
	})
	next, err := other.ToolResults(ctx(t), parked.ID, answer(parked.Pending[0].ID, "ada"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, next.Status, "%+v", next.Error)
	last := answer(next.Pending[0].ID, "36")
	done, err := other.ToolResults(ctx(t), parked.ID, last)
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)

	require.NoError(t, unpause(nodes[0].cmd.Process))
	within(t, 10*time.Second, "the stopped node goes on and renews its lease", func() bool {
		st, err := victim.Execute(ctx(t), serve.ExecutionRequest{Code: `return 1`})
		return err == nil && st.Status == serve.StatusCompleted
	})
	time.Sleep(time.Second) // the programs' loops would have called the tool several times

	for tag, n := range seen {
		require.Equal(t, n, tagged(tag), "%s: no side effect after NODE_LOST was seen\n%s", tag, nodes[0].logs.String())
	}
	again, err := victim.ToolResults(ctx(t), parked.ID, last)
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, again.Status, "the retried post answers the store's outcome: %+v", again.Error)
	require.JSONEq(t, `"ada:36"`, string(again.Value))
	for i, c := range clients {
		for _, id := range []string{plain.ID, kept.ID} {
			got, err := c.Get(ctx(t), id, false)
			require.NoError(t, err)
			require.Equal(t, serve.StatusFailed, got.Status, "node %d, %s", i+1, id)
			require.Equal(t, string(api.CodeNodeLost), got.Error.Code, "node %d, %s", i+1, id)
		}
		got, err := c.Get(ctx(t), parked.ID, false)
		require.NoError(t, err)
		require.Equal(t, serve.StatusCompleted, got.Status, "node %d", i+1)
		require.JSONEq(t, `"ada:36"`, string(got.Value), "node %d", i+1)
	}
	require.Contains(t, nodes[0].logs.String(), "lease lapsed", "the node noticed its lease lapsed")
}

// openStore opens the cluster's store beside the nodes, to read records.
func openStore(t *testing.T, url string) store.Store {
	t.Helper()
	s, err := store.OpenNATS(context.Background(), store.NATSConfig{URL: url, Name: "test",
		RecordsBucket: serve.DefaultRecordsBucket, SnapshotsBucket: serve.DefaultSnapshotBucket})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}
