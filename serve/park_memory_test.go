package serve_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/wasmhost"
)

// What a parked execution keeps in memory: its program (its whole
// snapshot, uncompressed) only for the park grace, where its bytes are
// in a store or spilled; past it, only their name.

// dirStore parks on a dir store of its own, with the park grace graceMS.
func dirStore(dir string, graceMS int64) func(*serve.Config) {
	return func(c *serve.Config) {
		c.Store = &serve.StoreConfig{Kind: "dir", Path: dir}
		c.Node, c.Lease = "n1", "1s"
		c.Server.ParkGraceMS = graceMS
	}
}

// On a dir store, executions parked past the grace hold no program in
// memory: their bytes in the store stand for them, and their answers
// resume them from there, with the right values.
func TestServer_park_storeHoldsNoProgramPastTheGrace(t *testing.T) {
	ts := newServer(t, dirStore(t.TempDir(), 20))
	c := ts.client(keyA)
	const n = 3
	sts := make([]*serve.ExecutionState, n)
	for i := range n {
		sts[i] = pendingOn(t, c, askTwice)
	}
	require.Eventually(t, func() bool { return serve.HeldPrograms(ts.srv) == 0 }, 10*time.Second, 5*time.Millisecond,
		"past the grace no parked execution holds its program in memory")
	reads, undo := serve.CountSnapshotReads()
	defer undo()
	for _, st := range sts {
		mid, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
		require.NoError(t, err)
		require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
		require.Eventually(t, func() bool { return serve.HeldPrograms(ts.srv) == 0 }, 10*time.Second, 5*time.Millisecond,
			"parked again, it lets its program go again")
		done, err := c.ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "36"))
		require.NoError(t, err)
		require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
		require.JSONEq(t, `"ada:36"`, string(done.Value))
	}
	require.Equal(t, 2*n, reads(), "every resume read its bytes from the store")
}

// Within the grace an execution parked on a store resumes from memory
// (nothing read); with no grace it holds nothing from the start.
func TestServer_park_storeGrace(t *testing.T) {
	t.Run("within", func(t *testing.T) {
		ts := newServer(t, dirStore(t.TempDir(), 60_000))
		c := ts.client(keyA)
		st := pendingOn(t, c, askTwice)
		require.Equal(t, 1, serve.HeldPrograms(ts.srv))
		reads, undo := serve.CountSnapshotReads()
		defer undo()
		mid, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
		require.NoError(t, err)
		require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
		require.Zero(t, reads(), "resumed from memory")
	})
	t.Run("none", func(t *testing.T) {
		ts := newServer(t, dirStore(t.TempDir(), -1))
		c := ts.client(keyA)
		st := pendingOn(t, c, askTwice)
		require.Zero(t, serve.HeldPrograms(ts.srv), "its bytes in the store stand for it as it parks")
		mid, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
		require.NoError(t, err)
		require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
		done, err := c.ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "36"))
		require.NoError(t, err)
		require.JSONEq(t, `"ada:36"`, string(done.Value))
	})
}

// An execution taken over after a restart is restored to be checked;
// past the grace it holds its program no more, and resumes from its bytes.
func TestServer_park_takenOverHoldsNoProgramPastTheGrace(t *testing.T) {
	dir := t.TempDir()
	before := newServer(t, dirStore(dir, 20))
	st := pendingOn(t, before.client(keyA), askTwice)
	serve.Crash(before.srv)

	after := newServer(t, func(c *serve.Config) { dirStore(dir, 20)(c); c.Node = "n2" })
	c := after.client(keyA)
	require.Eventually(t, func() bool { return serve.Holds(after.srv, st.ID) }, 20*time.Second, 20*time.Millisecond,
		"the new node takes it over")
	require.Eventually(t, func() bool { return serve.HeldPrograms(after.srv) == 0 }, 10*time.Second, 5*time.Millisecond)
	mid := answerOn(t, c, st.ID, answer(st.Pending[0].ID, "ada"))
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	done := answerOn(t, c, st.ID, answer(mid.Pending[0].ID, "36"))
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
}

// A resume refused BUSY within the spill grace (its bytes never written)
// keeps the program in memory: the retry resumes it.
func TestServer_parkGrace_resumeBusyWithinItKeepsTheProgram(t *testing.T) {
	rt, err := wasmhost.New(context.Background(), wasmhost.NewConfig().WithMaxRuns(1).WithAdmissionWait(0))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })
	ts := newServerOn(t, rt, func(c *serve.Config) {
		c.Store, c.SpillDir = nil, t.TempDir()
		c.Server.ParkGraceMS = 60_000 // longer than the test
	})
	c := ts.client(keyA)
	st := pendingOn(t, c, askTwice)
	blocker, err := ts.client(keyB).Execute(ctx(t), serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 30000))`, Wait: boolp(false)})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return rt.Usage().Runs == 1 }, 10*time.Second, 10*time.Millisecond, "the blocker holds the one run")

	_, err = c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
	e := apiErr(t, err)
	require.Equal(t, http.StatusServiceUnavailable, e.Status, "%+v", e.Body)
	require.Equal(t, "BUSY", e.Body.Code)
	require.Equal(t, 1, serve.HeldPrograms(ts.srv), "its program is still in memory, the only place it is")

	_, err = ts.client(keyB).Cancel(ctx(t), blocker.ID)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return rt.Usage().Runs == 0 }, 10*time.Second, 10*time.Millisecond)
	mid, err := c.ToolResults(ctx(t), st.ID) // the retry, with no results
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	done, err := c.ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "36"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
}

// A resumed execution's spilled file is removed once it settled (or parked
// again), off its client's path: a client waits for no unlink, which on a
// busy disk took up to tens of ms (the resumes' p99).
func TestServer_spill_removalIsNotOnTheClientsPath(t *testing.T) {
	spill := t.TempDir()
	ts := newServer(t, func(c *serve.Config) {
		c.Store, c.SpillDir = nil, spill
		c.Server.ParkGraceMS = -1
	})
	c := ts.client(keyA)
	st := pendingOn(t, c, `return await tools.ask({q: "x"})`)
	require.Len(t, parkFiles(t, spill), 1)
	release := serve.HoldSpillRemovals()
	defer release()
	cx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	done, err := c.ToolResults(cx, st.ID, answer(st.Pending[0].ID, "kept"))
	for err == nil && done.Status == serve.StatusRunning {
		done, err = c.Get(cx, st.ID, true)
	}
	require.NoError(t, err, "it settles while its file's removal is held")
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"kept"`, string(done.Value))
	require.Len(t, parkFiles(t, spill), 1, "settled while its file's removal is held")
	release()
	eventuallyParkFiles(t, spill, 0, "removed once released")
}

// A DELETE of an execution parked on a store past its grace restores its
// program from the store to discard it, as a spilled one's is, so that the
// executor sees it end; it fails CODE_RUN_FAILED.
func TestServer_park_storeCancelPastTheGraceDiscardsTheProgram(t *testing.T) {
	ts := newServer(t, dirStore(t.TempDir(), 20))
	c := ts.client(keyA)
	st := pendingOn(t, c, askTwice)
	require.Eventually(t, func() bool { return serve.HeldPrograms(ts.srv) == 0 }, 10*time.Second, 5*time.Millisecond)
	reads, undo := serve.CountSnapshotReads()
	defer undo()
	got, err := c.Cancel(ctx(t), st.ID)
	require.NoError(t, err)
	require.Equal(t, serve.StatusFailed, got.Status)
	require.Equal(t, "CODE_RUN_FAILED", got.Error.Code)
	require.Equal(t, 1, reads(), "its bytes were read back to discard its program")
}
