package serve_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/store"
)

// The same idempotency key and body on two nodes make one execution; the
// program runs once; another body is 409 on any node.
func TestCluster_idempotencyKey_oneExecutionAcrossNodes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "effects")
	tools := effectTools(t, out)
	nodes := newNodes(t, 3, func(_ int, c *serve.Config) { c.Tools = tools })
	c1, c2, c3 := nodes[0].client(keyA), nodes[1].client(keyA), nodes[2].client(keyA)

	req := serve.ExecutionRequest{Code: `await tools.effect({run: "settled"}); return Math.random()`, IdempotencyKey: "k1"}
	first, err := c1.Execute(ctx(t), req)
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, first.Status, "%+v", first.Error)
	second, err := c2.Execute(ctx(t), req)
	require.NoError(t, err)
	require.Equal(t, first.ID, second.ID, "node 2 answers with node 1's execution")
	require.Equal(t, string(first.Value), string(second.Value))
	require.Equal(t, []string{`{"run":"settled"}`}, effects(t, out), "the program ran once")

	other := req
	other.Code = `return 2`
	_, err = c3.Execute(ctx(t), other)
	e := apiErr(t, err)
	require.Equal(t, http.StatusConflict, e.Status)
	require.Contains(t, e.Body.Message, first.ID)

	// A retry while the first still runs gets it, running, then settled.
	slow := serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 300)); await tools.effect({run: "slow"}); return 2`,
		IdempotencyKey: "k2", Wait: boolp(false)}
	a, err := c1.Execute(ctx(t), slow)
	require.NoError(t, err)
	b, err := c2.Execute(ctx(t), slow)
	require.NoError(t, err)
	require.Equal(t, a.ID, b.ID)
	done, err := c3.Get(ctx(t), a.ID, true)
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v\n%s\n%s\n%s", done.Error, nodes[0].logs.String(), nodes[1].logs.String(), nodes[2].logs.String())
	c, err := c3.Execute(ctx(t), slow)
	require.NoError(t, err)
	require.Equal(t, a.ID, c.ID)
	require.Equal(t, []string{`{"run":"settled"}`, `{"run":"slow"}`}, effects(t, out))

	// Keys are per tenant.
	theirs, err := nodes[1].client(keyB).Execute(ctx(t), req)
	require.NoError(t, err)
	require.NotEqual(t, first.ID, theirs.ID)
	require.Len(t, effects(t, out), 3)

	// The store's key reveals neither the tenant nor the key.
	r, err := serve.Reservation(nodes[0].srv, "a", "k1")
	require.NoError(t, err)
	require.Equal(t, first.ID, r.ID)
	require.NotContains(t, r.Key, "k1")
}

// Nodes racing to start one key make one execution, whichever node each
// request reaches.
func TestCluster_idempotencyKey_racingNodesMakeOne(t *testing.T) {
	out := filepath.Join(t.TempDir(), "effects")
	tools := effectTools(t, out)
	nodes := newNodes(t, 3, func(_ int, c *serve.Config) { c.Tools = tools })
	req := serve.ExecutionRequest{Code: `await tools.effect({run: "race"}); return 1`, IdempotencyKey: "race", Wait: boolp(false)}
	const posts = 24
	ids := make(chan string, posts)
	var wg sync.WaitGroup
	for i := range posts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := nodes[i%3].client(keyA).Execute(ctx(t), req)
			if err != nil {
				ids <- err.Error()
				return
			}
			ids <- st.ID
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[string]int{}
	var id string
	for got := range ids {
		seen[got]++
		id = got
	}
	require.Len(t, seen, 1, "one execution: %v", seen)
	done, err := nodes[0].client(keyA).Get(ctx(t), id, true)
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status)
	require.Equal(t, []string{`{"run":"race"}`}, effects(t, out), "the program ran once")
}

// A reservation whose execution never wrote its record (its start
// failed, or its node died first) does not hold its key forever: past
// the start's bound, or once its node is gone, it is taken over; a fresh
// one of a live node is waited for (then 409, to retry), and with another
// body is 409 at once.
func TestCluster_idempotencyKey_abandonedReservationIsTakenOver(t *testing.T) {
	out := filepath.Join(t.TempDir(), "effects")
	tools := effectTools(t, out)
	nodes := newNodes(t, 2, func(_ int, c *serve.Config) {
		c.Tools = tools
		c.Server.MaxWaitMS = 500
	})
	body := func(key string) string {
		return `{"code": "await tools.effect({}); return 1", "idempotency_key": "` + key + `"}`
	}
	sumOf := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	post := func(key string) (int, serve.ExecutionState, serve.ErrorEnvelope) {
		status, resp, _ := raw(t, "POST", nodes[1].url+"/v1/executions", keyA, body(key))
		var st serve.ExecutionState
		var env serve.ErrorEnvelope
		if status == http.StatusOK {
			require.NoError(t, json.Unmarshal([]byte(resp), &st))
		} else {
			require.NoError(t, json.Unmarshal([]byte(resp), &env), resp)
		}
		return status, st, env
	}
	srv := nodes[0].srv
	tests := []struct {
		name, node string
		age        time.Duration
		sameBody   bool
		status     int
	}{
		{"older than the start's bound", "n1", time.Hour, true, http.StatusOK},
		{"its node gone", "n9", 0, true, http.StatusOK},
		{"fresh, its node live", "n1", 0, true, http.StatusConflict},
		{"fresh, another body", "n1", 0, false, http.StatusConflict},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := "left-" + string(rune('a'+i))
			sum := sumOf(body(key))
			if !tt.sameBody {
				sum = sumOf("another body")
			}
			require.NoError(t, serve.ReserveKey(srv, "a", key, "ex_never", tt.node, sum, time.Now().Add(-tt.age)))
			before := len(effects(t, out))
			start := time.Now()
			status, st, env := post(key)
			require.Equal(t, tt.status, status, "%+v", env.Error)
			if status == http.StatusOK {
				require.NotEqual(t, "ex_never", st.ID)
				require.Equal(t, serve.StatusCompleted, st.Status)
				require.Len(t, effects(t, out), before+1, "it ran")
				r, err := serve.Reservation(srv, "a", key)
				require.NoError(t, err)
				require.Equal(t, st.ID, r.ID, "the reservation names the execution that took it over")
				return
			}
			require.Equal(t, serve.CodeConflict, env.Error.Code)
			require.Len(t, effects(t, out), before, "nothing ran")
			if tt.sameBody {
				require.GreaterOrEqual(t, time.Since(start), 500*time.Millisecond, "waited for its record, server.max_wait_ms")
			}
		})
	}
}

// A start refused (here 429: the tenant's concurrent quota) gives its
// key's reservation back at once: the retry runs, on any node.
func TestCluster_idempotencyKey_refusedStartGivesTheKeyBack(t *testing.T) {
	nodes := newNodes(t, 2, func(_ int, c *serve.Config) { c.Tenants[0].Quotas.MaxConcurrent = 1 })
	c1, c2 := nodes[0].client(keyA), nodes[1].client(keyA)
	busy, err := c1.Execute(ctx(t), serve.ExecutionRequest{Code: `const end = Date.now() + 1500; while (Date.now() < end) {} return 1`, Wait: boolp(false)})
	require.NoError(t, err)
	req := serve.ExecutionRequest{Code: `return 2`, IdempotencyKey: "refused"}
	_, err = c1.Execute(ctx(t), req)
	require.Equal(t, http.StatusTooManyRequests, apiErr(t, err).Status)
	_, err = serve.Reservation(nodes[0].srv, "a", "refused")
	require.ErrorIs(t, err, store.ErrNotFound, "given back")

	_, err = c1.Get(ctx(t), busy.ID, true)
	require.NoError(t, err)
	st, err := c2.Execute(ctx(t), req)
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status)
	again, err := c1.Execute(ctx(t), req)
	require.NoError(t, err)
	require.Equal(t, st.ID, again.ID)
}
