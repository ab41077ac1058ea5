package serve_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/store"
)

// The node that claims a parked execution reads its bytes once, after the
// claim: the loser of a race reads nothing, and the resume reads nothing
// again.
func TestCluster_takeOver_readsTheSnapshotOnceAfterTheClaim(t *testing.T) {
	nodes := newNodes(t, 3, nil)
	st := pendingOn(t, nodes[0].client(keyA), askTwice)
	serve.Crash(nodes[0].srv)

	reads, undo := serve.CountSnapshotReads()
	defer undo()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, n := range nodes[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = serve.TakeOverFrom(n.srv, st.ID, "n1")
		}()
	}
	wg.Wait()
	require.True(t, (errs[0] == nil) != (errs[1] == nil), "one wins: %v", errs)
	require.Equal(t, 1, reads(), "read once, by the winner, after its claim")

	c := nodes[1].client(keyA)
	mid, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	done, err := c.ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "36"))
	require.NoError(t, err)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
	require.Equal(t, 1, reads(), "its resume restored nothing again")
}

// A record whose snapshot is not its execution's own (another's, other
// bytes under its name, bytes altered, a record of another tenant) is
// failed by the node that claims it, with a clear error that is not
// retryable and a log line: no one else's program is resumed as it. The
// other execution is untouched.
func TestCluster_takeOver_refusesASnapshotNotItsOwn(t *testing.T) {
	tests := []struct {
		name   string
		tenant string // whose key reads the failed record
		spoil  func(t *testing.T, s *serve.Server, own, other store.Record)
		want   string
	}{
		{"another execution's snapshot", keyA, func(t *testing.T, s *serve.Server, own, other store.Record) {
			require.NoError(t, serve.EditRecord(s, own.ID, func(r *store.Record) { r.Snapshot = other.Snapshot }))
		}, "is the parked state of execution"},
		{"another execution's bytes under its name", keyA, func(t *testing.T, s *serve.Server, own, other store.Record) {
			b, err := serve.SnapshotBytes(s, other.Snapshot)
			require.NoError(t, err)
			require.NoError(t, serve.PutSnapshotBytes(s, own.Snapshot, b))
		}, "is the parked state of execution"},
		{"its bytes altered", keyA, func(t *testing.T, s *serve.Server, own, _ store.Record) {
			b, err := serve.SnapshotBytes(s, own.Snapshot)
			require.NoError(t, err)
			b[len(b)-1] ^= 1
			require.NoError(t, serve.PutSnapshotBytes(s, own.Snapshot, b))
		}, "is corrupt or not the one its record names"},
		{"a record of another tenant", keyB, func(t *testing.T, s *serve.Server, own, _ store.Record) {
			require.NoError(t, serve.EditRecord(s, own.ID, func(r *store.Record) { r.Tenant = "b" }))
		}, "of tenant a, not of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes := newNodes(t, 2, nil)
			c1 := nodes[0].client(keyA)
			own := pendingOn(t, c1, askTwice)
			other := pendingOn(t, c1, askTwice)
			serve.Crash(nodes[0].srv)
			ownRec, err := serve.Record(nodes[1].srv, own.ID)
			require.NoError(t, err)
			otherRec, err := serve.Record(nodes[1].srv, other.ID)
			require.NoError(t, err)
			tt.spoil(t, nodes[1].srv, ownRec, otherRec)

			err = serve.TakeOver(nodes[1].srv, own.ID)
			require.ErrorContains(t, err, "snapshot is not its own")
			require.ErrorContains(t, err, tt.want)
			require.False(t, serve.Holds(nodes[1].srv, own.ID))
			got, err := nodes[1].client(tt.tenant).Get(ctx(t), own.ID, false)
			require.NoError(t, err)
			require.Equal(t, serve.StatusFailed, got.Status)
			require.Equal(t, "INTERNAL", got.Error.Code, "not retryable: running it again would not make its bytes its own")
			require.Contains(t, got.Error.Message, "could not be taken over from node n1")
			require.Contains(t, got.Error.Message, tt.want)
			require.Contains(t, nodes[1].logs.String(), `"msg":"refused to take over a parked execution`)

			// The other execution is its own, whole.
			c2 := nodes[1].client(keyA)
			mid := answerOn(t, c2, other.ID, answer(other.Pending[0].ID, "bob"))
			require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
			done := answerOn(t, c2, other.ID, answer(mid.Pending[0].ID, "7"))
			require.Equal(t, serve.StatusCompleted, done.Status, "%+v\n%s", done.Error, nodes[1].logs.String())
			require.JSONEq(t, `"bob:7"`, string(done.Value))
		})
	}
}

// eventTypes are the types of events, sorted.
func eventTypes(events []serve.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Type)
	}
	sort.Strings(out)
	return out
}

// requireNumbered checks that events are numbered from..from+len-1.
func requireNumbered(t *testing.T, events []serve.Event, from int) {
	t.Helper()
	for i, e := range events {
		require.Equal(t, from+i, e.ID, "no duplicate, no gap: %+v", events)
	}
}

// After a takeover, event ids go on from the last one its owner published
// (a result it received after parking included): a stream read from any
// node, the new owner's too, and one resumed with Last-Event-ID, has every
// event once, in order.
func TestCluster_takeOver_eventsGoOnFromTheLastPublished(t *testing.T) {
	nodes := newNodes(t, 3, nil)
	c1 := nodes[0].client(keyA)
	st := pendingOn(t, c1, `const [a, b] = await Promise.all([tools.ask({q: "a"}), tools.ask({q: "b"})]); return a + b`)
	require.Len(t, st.Pending, 2)
	mid, err := c1.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "A"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status)
	require.Eventually(t, func() bool {
		_, last, err := serve.PublishedEvents(nodes[1].srv, st.ID)
		return err == nil && last == 3
	}, 10*time.Second, 20*time.Millisecond, "the result node 1 received is published: event 3")
	serve.Crash(nodes[0].srv)

	require.NoError(t, serve.TakeOver(nodes[1].srv, st.ID))
	done, err := nodes[1].client(keyA).ToolResults(ctx(t), st.ID, answer(st.Pending[1].ID, "B"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"AB"`, string(done.Value))

	want := []string{serve.EventCallFinished, serve.EventCallFinished, serve.EventCallStarted, serve.EventCallStarted,
		serve.EventDone, serve.EventPending, serve.EventPending, serve.EventResult, serve.EventResult}
	for name, n := range map[string]*testServer{"the new owner": nodes[1], "another node": nodes[2]} {
		events, err := n.client(keyA).Events(ctx(t), st.ID, 0)
		require.NoError(t, err, name)
		requireNumbered(t, events, 1)
		require.Equal(t, want, eventTypes(events), name)
		rest, err := n.client(keyA).Events(ctx(t), st.ID, 3)
		require.NoError(t, err, name)
		requireNumbered(t, rest, 4)
		require.Equal(t, events[3:], rest, "%s: resumed after the last event node 1 published", name)
	}
}

// A node lost after its parked record was written and before the park's
// pending events were published: the node that takes it over publishes
// them, and the stream has every event once, in order.
func TestCluster_takeOver_publishesThePendingEventsItsOwnerDidNot(t *testing.T) {
	nodes := newNodes(t, 3, nil)
	undo := serve.DropPublishes("n1")
	defer undo()
	st := pendingOn(t, nodes[0].client(keyA), `const [a, b] = await Promise.all([tools.ask({q: "a"}), tools.ask({q: "b"})]); return a + b`)
	serve.Crash(nodes[0].srv) // its record written, its events never published
	undo()
	_, last, err := serve.PublishedEvents(nodes[1].srv, st.ID)
	require.NoError(t, err)
	require.Zero(t, last)

	require.NoError(t, serve.TakeOver(nodes[1].srv, st.ID))
	c := nodes[1].client(keyA)
	done, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "A"), answer(st.Pending[1].ID, "B"))
	require.NoError(t, err)
	require.JSONEq(t, `"AB"`, string(done.Value))
	events, err := nodes[2].client(keyA).Events(ctx(t), st.ID, 0)
	require.NoError(t, err)
	requireNumbered(t, events, 1)
	require.Equal(t, serve.EventPending, events[0].Type)
	require.Equal(t, serve.EventPending, events[1].Type)
	var p serve.PendingCall
	require.NoError(t, json.Unmarshal(events[1].Data, &p))
	require.Equal(t, st.Pending[1], p, "rebuilt as it was")
}

// A takeover reads at most its bound of an execution's published events:
// below the count it has a prefix (and numbers on from the last id
// published all the same), at it and past it all of them.
func TestCluster_publishedEvents_readBound(t *testing.T) {
	n := newNodes(t, 1, nil)[0]
	c := n.client(keyA)
	st := pendingOn(t, c, askTwice)
	mid, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
	require.NoError(t, err)
	_, err = c.ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "36"))
	require.NoError(t, err)
	all, err := c.Events(ctx(t), st.ID, 0)
	require.NoError(t, err)
	count := len(all)
	require.Eventually(t, func() bool {
		_, last, err := serve.PublishedEventsUpTo(n.srv, st.ID, count)
		return err == nil && last == count
	}, 10*time.Second, 20*time.Millisecond)
	for _, tt := range []struct{ limit, want int }{{count - 1, count - 1}, {count, count}, {count + 1, count}} {
		events, last, err := serve.PublishedEventsUpTo(n.srv, st.ID, tt.limit)
		require.NoError(t, err)
		require.Equal(t, count, last, "limit %d", tt.limit)
		require.Len(t, events, tt.want, "limit %d", tt.limit)
		requireNumbered(t, events, 1)
	}
}

// max_events counts across a takeover: the events kept and dropped before
// it count toward the bound after it, and the done event reports them all.
func TestCluster_takeOver_maxEventsCarriesOver(t *testing.T) {
	nodes := newNodes(t, 3, func(_ int, c *serve.Config) { c.Server.MaxEvents = 4 })
	c1 := nodes[0].client(keyA)
	st := pendingOn(t, c1, askTwice) // pending: 1
	mid, err := c1.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
	require.NoError(t, err) // result, call_started, call_finished: 2..4; the second pending is dropped
	require.Equal(t, serve.StatusPending, mid.Status)
	require.Eventually(t, func() bool {
		_, last, err := serve.PublishedEvents(nodes[1].srv, st.ID)
		return err == nil && last == 4
	}, 10*time.Second, 20*time.Millisecond)
	serve.Crash(nodes[0].srv)

	require.NoError(t, serve.TakeOver(nodes[1].srv, st.ID))
	done, err := nodes[1].client(keyA).ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "36"))
	require.NoError(t, err)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
	for _, n := range nodes[1:] {
		events, err := n.client(keyA).Events(ctx(t), st.ID, 0)
		require.NoError(t, err)
		requireNumbered(t, events, 1)
		require.Len(t, events, 5, "max_events kept, and the done event")
		last := events[4]
		require.Equal(t, serve.EventDone, last.Type)
		var d struct {
			Dropped int `json:"dropped_events"`
		}
		require.NoError(t, json.Unmarshal(last.Data, &d))
		require.Equal(t, 4, d.Dropped, "the pending dropped on node 1, and result, call_started, call_finished dropped on node 2")
	}
}

// A lost node's records are listed once to settle it: its running
// executions fail and its parked ones are taken over from one listing.
func TestCluster_reapLost_listsTheRecordsOnce(t *testing.T) {
	nodes := newNodes(t, 2, nil)
	c1 := nodes[0].client(keyA)
	parked := pendingOn(t, c1, askTwice)
	running, err := c1.Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 30000)); return 1`, Wait: boolp(false)})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		r, err := serve.Record(nodes[1].srv, running.ID)
		return err == nil && r.Status == serve.StatusRunning
	}, 10*time.Second, 20*time.Millisecond)
	serve.Crash(nodes[0].srv)

	lists, err := serve.ReapLost(nodes[1].srv, "n1")
	require.NoError(t, err)
	require.Equal(t, 1, lists)
	require.True(t, serve.Holds(nodes[1].srv, parked.ID), "the parked one is taken over")
	got, err := nodes[1].client(keyA).Get(ctx(t), running.ID, false)
	require.NoError(t, err)
	require.Equal(t, "NODE_LOST", got.Error.Code, "the running one is failed")
}

// A node that claims a parked execution and cannot read its bytes gives
// the claim back: the client is answered 503, and its retry resumes it.
// With NATS, through a lost node's execution answered on another.
func TestCluster_takeOver_readFailureAnswers503ThenResumes(t *testing.T) {
	nodes := newNodes(t, 2, nil)
	st := pendingOn(t, nodes[0].client(keyA), askTwice)
	serve.Crash(nodes[0].srv)
	undo := serve.FailSnapshotReads(1 << 20)
	defer undo()

	c := nodes[1].client(keyA)
	deadline := time.Now().Add(45 * time.Second)
	for {
		_, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
		e := apiErr(t, err)
		require.Equal(t, http.StatusServiceUnavailable, e.Status, "%+v", e.Body)
		require.NotEmpty(t, e.RetryAfter)
		if e.Body.Code == serve.CodeStoreUnavailable {
			require.Contains(t, e.Body.Message, "injected by the test")
			break
		}
		require.Equal(t, serve.CodeOwnerUnavailable, e.Body.Code, "until node 1's lease expires")
		require.True(t, time.Now().Before(deadline), "no STORE_UNAVAILABLE within 45 s")
		time.Sleep(100 * time.Millisecond)
	}
	r, err := serve.Record(nodes[1].srv, st.ID)
	require.NoError(t, err)
	require.Equal(t, "n1", r.Owner, "the claim was given back")
	require.Equal(t, serve.StatusPending, r.Status)

	undo()
	mid := answerOn(t, c, st.ID, answer(st.Pending[0].ID, "ada"))
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	done := answerOn(t, c, st.ID, answer(mid.Pending[0].ID, "36"))
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
}

// The same with the dir store, across a restart: the new node's start
// cannot read the bytes, nor can the first POST (503); the retry resumes.
func TestServer_restart_readFailureAnswers503ThenResumes(t *testing.T) {
	dir := t.TempDir()
	withDir := func(node string) func(*serve.Config) {
		return func(c *serve.Config) {
			c.Store = &serve.StoreConfig{Kind: "dir", Path: dir}
			c.Node, c.Lease = node, "1s"
		}
	}
	before := newServer(t, withDir("first"))
	st := pendingOn(t, before.client(keyA), askTwice)
	serve.Crash(before.srv)
	undo := serve.FailSnapshotReads(1 << 20)
	defer undo()

	after := newServer(t, withDir("second"))
	c := after.client(keyA)
	_, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
	e := apiErr(t, err)
	require.Equal(t, http.StatusServiceUnavailable, e.Status, "%+v", e.Body)
	require.Equal(t, serve.CodeStoreUnavailable, e.Body.Code)
	require.NotEmpty(t, e.RetryAfter)
	got, err := c.Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, got.Status, "still parked: %+v", got.Error)

	undo()
	mid, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	done, err := c.ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "36"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
}
