package serve_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// spillServer serves with a spill directory of its own and the park grace
// graceMS (server.park_grace_ms).
func spillServer(t *testing.T, graceMS int64) (*testServer, string) {
	t.Helper()
	spill := t.TempDir()
	ts := newServer(t, func(c *serve.Config) {
		c.Store, c.SpillDir = nil, spill
		c.Server.ParkGraceMS = graceMS
	})
	return ts, spill
}

// A client that answers within the park grace resumes the execution from
// memory: its bytes are never written to the spill directory, at either of
// its two parks, and its answer is right.
func TestServer_parkGrace_quickAnswerWritesNothing(t *testing.T) {
	ts, spill := spillServer(t, 5000) // far longer than the test takes to answer
	c := ts.client(keyA)
	st := pendingOn(t, c, askTwice)
	require.Empty(t, parkFiles(t, spill))
	mid, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	require.Empty(t, parkFiles(t, spill))
	done, err := c.ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "36"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
	require.Empty(t, parkFiles(t, spill))
	require.NotContains(t, ts.logs.String(), "execution spilled")
	require.Zero(t, gaugeOrZero(t, ts, "ptcx_spills_total", "a"), "no park was spilled")
	require.Equal(t, 0.0, gauge(t, ts, "ptcx_executions_parked", "a"))
}

// A client slower than the grace finds the execution's bytes in the spill
// directory (it holds no memory for them any more), and its answer
// restores them from there: the park is as without a grace.
func TestServer_parkGrace_slowAnswerIsSpilled(t *testing.T) {
	ts, spill := spillServer(t, 20)
	c := ts.client(keyA)
	st := pendingOn(t, c, askTwice)
	require.Eventually(t, func() bool { return len(parkFiles(t, spill)) == 1 }, 10*time.Second, 5*time.Millisecond,
		"past the grace its bytes are written")
	require.Eventually(t, func() bool { return strings.Contains(ts.logs.String(), `"msg":"execution spilled"`) }, 10*time.Second, 5*time.Millisecond,
		"logged just after its file is written")
	first := parkFiles(t, spill)[0]
	mid, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	require.Eventually(t, func() bool { f := parkFiles(t, spill); return len(f) == 1 && f[0] != first }, 10*time.Second, 5*time.Millisecond,
		"the first file gone, the second park's written past its grace")
	done, err := c.ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "36"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
	eventuallyParkFiles(t, spill, 0, "its file is gone")
	require.Equal(t, 2, strings.Count(ts.logs.String(), `"msg":"execution spilled"`))
	require.Equal(t, 2.0, gauge(t, ts, "ptcx_spills_total", "a"), "both parks were spilled")
}

// An execution cancelled within its grace is never written afterwards.
func TestServer_parkGrace_cancelledWithinItWritesNothing(t *testing.T) {
	ts, spill := spillServer(t, 50)
	c := ts.client(keyA)
	st := pendingOn(t, c, askTwice)
	got, err := c.Cancel(ctx(t), st.ID)
	require.NoError(t, err)
	require.Equal(t, serve.StatusFailed, got.Status)
	time.Sleep(150 * time.Millisecond) // past the grace's timer
	require.Empty(t, parkFiles(t, spill))
	require.Zero(t, gaugeOrZero(t, ts, "ptcx_spills_total", "a"))
	require.NotContains(t, ts.logs.String(), "execution spilled")
}

// A negative park_grace_ms writes at once; 0 is the default grace.
func TestServer_parkGrace_negativeWritesAtOnce(t *testing.T) {
	ts, spill := spillServer(t, -1)
	st := pendingOn(t, ts.client(keyA), askTwice)
	require.Len(t, parkFiles(t, spill), 1)
	_, err := ts.client(keyA).Cancel(ctx(t), st.ID)
	require.NoError(t, err)
	require.Equal(t, 30*time.Millisecond, serve.DefaultParkGrace)
}

// Answers that race the grace's end (before it, at it, after it) each
// resume the execution once with the right answer, from memory or from
// its bytes, and leave no file behind (run with -race).
func TestServer_parkGrace_answersRacingItsEnd(t *testing.T) {
	ts, spill := spillServer(t, 5)
	c := ts.client(keyA)
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for range n {
		wg.Go(func() {
			cx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			st, err := c.Execute(cx, serve.ExecutionRequest{Code: askTwice, ClientTools: []serve.ClientTool{askTool}})
			if err != nil || st.Status != serve.StatusPending {
				errs <- "start: " + errString(err)
				return
			}
			for _, v := range []string{"ada", "36"} {
				time.Sleep(time.Duration(rand.IntN(10_000)) * time.Microsecond)
				if st, err = c.ToolResults(cx, st.ID, answer(st.Pending[0].ID, v)); err != nil {
					errs <- "answer: " + err.Error()
					return
				}
			}
			if st.Status != serve.StatusCompleted || string(st.Value) != `"ada:36"` {
				errs <- "execution " + st.ID + " ended " + st.Status + " with " + string(st.Value)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	eventuallyParkFiles(t, spill, 0, "no file is left behind")
}

func errString(err error) string {
	if err == nil {
		return "not pending"
	}
	return err.Error()
}
