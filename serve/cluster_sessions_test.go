package serve_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// sessionHosts are the two ways a node runs a keep_state program: with a
// workspace, in an executor of the execution's own (which loads the
// session's state each time); without, in the tenant's main executor
// (which holds it live between programs, and drops a stale copy).
var sessionHosts = []struct {
	name string
	edit func(int, *serve.Config)
}{
	{"own executor", nil},
	{"main executor", func(_ int, c *serve.Config) { c.Workspace = "" }},
}

func TestCluster_KeepState_anotherNodeContinues(t *testing.T) {
	for _, h := range sessionHosts {
		t.Run(h.name, func(t *testing.T) {
			nodes := newNodes(t, 2, h.edit)
			keep(t, nodes[0].client(keyA), "chat", `globalThis.n = 41; return n`)
			st := keep(t, nodes[1].client(keyA), "chat", `return n + 1`)
			require.JSONEq(t, `42`, string(st.Value))
			// And back: node 1 drops its stale copy and sees node 2's state.
			keep(t, nodes[1].client(keyA), "chat", `n = 100; return n`)
			require.JSONEq(t, `101`, string(keep(t, nodes[0].client(keyA), "chat", `return n + 1`).Value))
		})
	}
}

// TestCluster_KeepState_racingNodesLoseNoUpdate posts 10 increments of one
// session, 5 to each of two nodes at once: they run one at a time, each
// in the state the one before left. The leases are long: a node whose
// lease lapses is presumed lost and its session taken over (that program's
// save then fails with a notice), which a loaded machine running -race can
// make happen to a 1 s lease; the crash test covers that path.
func TestCluster_KeepState_racingNodesLoseNoUpdate(t *testing.T) {
	for _, h := range sessionHosts {
		t.Run(h.name, func(t *testing.T) {
			racingIncrements(t, newNodes(t, 2, func(i int, c *serve.Config) {
				if h.edit != nil {
					h.edit(i, c)
				}
				c.Lease = "15s"
			}))
		})
	}
}

func racingIncrements(t *testing.T, nodes []*testServer) {
	const each = 5
	var wg sync.WaitGroup
	var mu sync.Mutex
	var seen []int
	errs := make(chan error, 2*each)
	for i := range 2 * each {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := nodes[i%2].client(keyA).Execute(ctx(t), serve.ExecutionRequest{
				Code: `globalThis.n = (globalThis.n ?? 0) + 1; return n`, Session: "counter", KeepState: true})
			if err == nil && st.Status != serve.StatusCompleted {
				err = fmt.Errorf("execution %s: %s %+v", st.ID, st.Status, st.Error)
			}
			if err != nil {
				errs <- err
				return
			}
			var n int
			if err := json.Unmarshal(st.Value, &n); err != nil {
				errs <- err
				return
			}
			mu.Lock()
			seen = append(seen, n)
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	sort.Ints(seen)
	require.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, seen, "each increment saw the one before")
	require.JSONEq(t, `10`, string(keep(t, nodes[0].client(keyA), "counter", `return n`).Value))
}

// TestCluster_KeepState_crashedNodeTakenOver: node 1 crashes while a
// program of the session waits on its client; node 2 takes the session
// over once node 1's lease expires, from the state saved last.
func TestCluster_KeepState_crashedNodeTakenOver(t *testing.T) {
	nodes := newNodes(t, 2, func(_ int, c *serve.Config) { c.Tenants[0].Sessions.WaitMS = 20000 })
	c1 := nodes[0].client(keyA)
	keep(t, c1, "chat", `globalThis.n = 41; return n`)
	st, err := c1.Execute(ctx(t), serve.ExecutionRequest{Code: `n = 100; return await tools.ask({q: "?"})`,
		Session: "chat", KeepState: true, ClientTools: []serve.ClientTool{askTool}})
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, st.Status, "%+v", st.Error)
	serve.Crash(nodes[0].srv)
	require.JSONEq(t, `42`, string(keep(t, nodes[1].client(keyA), "chat", `return n + 1`).Value))
}

func TestCluster_KeepState_tenantsApart(t *testing.T) {
	nodes := newNodes(t, 2, nil)
	keep(t, nodes[0].client(keyA), "same", `globalThis.secret = "a's"; return 1`)
	require.JSONEq(t, `"undefined"`, string(keep(t, nodes[1].client(keyB), "same", `return typeof secret`).Value))
	keep(t, nodes[1].client(keyB), "same", `globalThis.secret = "b's"; return 1`)
	require.JSONEq(t, `"a's"`, string(keep(t, nodes[1].client(keyA), "same", `return secret`).Value))
	require.JSONEq(t, `"b's"`, string(keep(t, nodes[0].client(keyB), "same", `return secret`).Value))
}
