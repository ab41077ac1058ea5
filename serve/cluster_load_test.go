package serve_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// TestCluster_overflowLoad sends a bounded burst of executions to node 1
// of three, each node with two slots and the overflow queue on: every
// result comes back right, through any node (0 lost). It logs the
// throughput of the same burst on one node without an execution bound; on this
// shared 2-core machine the two are close: the nodes share the cores.
func TestCluster_overflowLoad(t *testing.T) {
	const total, inflight = 60, 12
	run := func(t *testing.T, nodes []*testServer) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		sem := make(chan struct{}, inflight)
		errs := make(chan error, total)
		for i := range total {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				st, err := nodes[0].client(keyA).Execute(ctx(t), serve.ExecutionRequest{Code: `let s = 0; for (let k = 0; k < 20000; k++) s += k; return ` + strconv.Itoa(i), Wait: boolp(false)})
				if err != nil {
					errs <- err
					return
				}
				got, err := nodes[i%len(nodes)].client(keyA).Get(ctx(t), st.ID, true)
				if err == nil && (got.Status != serve.StatusCompleted || string(got.Value) != strconv.Itoa(i)) {
					err = &mismatch{i: i, st: got}
				}
				if err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		return time.Since(start)
	}
	limits := func(c *serve.Config) { c.Tenants[0].Quotas.MaxConcurrent = total }
	one := newNodes(t, 1, func(_ int, c *serve.Config) { limits(c); c.Server.MaxExecutions = total })
	d1 := run(t, one)
	three := newNodes(t, 3, func(_ int, c *serve.Config) { limits(c); c.Overflow = true; c.Server.MaxExecutions = 2 })
	d3 := run(t, three)
	t.Logf("%d executions, 0 lost: one node (no execution bound) %.0f/s; three nodes (2 slots each, overflow) %.0f/s; ratio %.2f (the nodes share this machine's cores)",
		total, total/d1.Seconds(), total/d3.Seconds(), d1.Seconds()/d3.Seconds())
}

type mismatch struct {
	i  int
	st *serve.ExecutionState
}

func (m *mismatch) Error() string {
	return "execution " + strconv.Itoa(m.i) + " answered " + m.st.Status + " " + string(m.st.Value)
}
