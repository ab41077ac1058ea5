package serve_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/serve"
)

// parkFiles lists the spilled executions under a spill_dir.
func parkFiles(t *testing.T, spillDir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(spillDir, "serve-*", "records", "*.park"))
	require.NoError(t, err)
	return m
}

// eventuallyParkFiles waits until n spilled executions are under a
// spill_dir: a resumed execution's file is removed once it settled or
// parked again, just after its client may see it so.
func eventuallyParkFiles(t *testing.T, spillDir string, n int, msg string) {
	t.Helper()
	require.Eventually(t, func() bool { return len(parkFiles(t, spillDir)) == n }, 10*time.Second, 5*time.Millisecond, msg)
}

// Without a store, a parked execution's bytes are in the spill directory,
// not in memory; its results restore it from there (the file is gone),
// a cancel does too, and closing the server removes the directory.
func TestServer_spill_parkedExecutionsWaitOnDisk(t *testing.T) {
	spill := t.TempDir()
	ts := newServer(t, func(c *serve.Config) {
		c.Store, c.SpillDir = nil, spill
		c.Server.ParkGraceMS = -1 // its bytes written at once, as this test reads them
	})
	c := ts.client(keyA)

	st := pendingOn(t, c, askTwice)
	require.Len(t, parkFiles(t, spill), 1, "parked: its bytes spilled")
	mid, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	eventuallyParkFiles(t, spill, 1, "parked again, once")
	done, err := c.ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "36"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
	eventuallyParkFiles(t, spill, 0, "a restored execution's file is gone")

	cancelled := pendingOn(t, c, askTwice)
	require.Len(t, parkFiles(t, spill), 1)
	got, err := c.Cancel(ctx(t), cancelled.ID)
	require.NoError(t, err)
	require.Equal(t, serve.StatusFailed, got.Status)
	require.Equal(t, "CODE_RUN_FAILED", got.Error.Code)
	require.Empty(t, parkFiles(t, spill))

	pendingOn(t, c, askTwice)
	require.NoError(t, ts.srv.Close(context.Background()))
	left, err := filepath.Glob(filepath.Join(spill, "serve-*"))
	require.NoError(t, err)
	require.Empty(t, left, "Close removes the spill directory")
}

// With no spill_dir the spill directory is under the user's cache
// directory; one that cannot be made is a clear error naming the field.
func TestServer_spill_defaultAndBadDir(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	ts := newServer(t, func(c *serve.Config) {
		c.Store = nil
		c.Server.ParkGraceMS = -1 // its bytes written at once, as this test reads them
	})
	st := pendingOn(t, ts.client(keyA), askTwice)
	require.Len(t, parkFiles(t, filepath.Join(cache, "ptcx", "spill")), 1)
	_, err := ts.client(keyA).Cancel(ctx(t), st.ID)
	require.NoError(t, err)

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = serve.New(context.Background(), &serve.Config{
		Listen: "127.0.0.1:0", SpillDir: filepath.Join(file, "under"),
		Tenants: []serve.TenantConfig{{Name: "a", KeySHA256: sum(keyA), Mode: "ptc"}},
	}, serve.Options{Runtime: testkit.Sandbox(t)})
	require.ErrorContains(t, err, "serve: field spill_dir: mkdir "+file+": not a directory")
}

// A spilled execution whose file cannot be read when its results come is
// answered 503 and stays parked, its file and its results kept; the retry
// resumes it, and the file goes only once the program ran.
func TestServer_spill_readFailureKeepsItParked(t *testing.T) {
	spill := t.TempDir()
	ts := newServer(t, func(c *serve.Config) {
		c.Store, c.SpillDir = nil, spill
		c.Server.ParkGraceMS = -1 // its bytes written at once, as this test reads them
	})
	c := ts.client(keyA)
	st := pendingOn(t, c, askTwice)

	undo := serve.FailSnapshotReads(1)
	defer undo()
	_, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
	e := apiErr(t, err)
	require.Equal(t, http.StatusServiceUnavailable, e.Status, "%+v", e.Body)
	require.Equal(t, serve.CodeStoreUnavailable, e.Body.Code)
	require.NotEmpty(t, e.RetryAfter)
	require.Contains(t, e.Body.Message, "injected by the test")
	require.Contains(t, e.Body.Message, "it is still parked")
	require.Len(t, parkFiles(t, spill), 1, "its file stays")
	got, err := c.Get(ctx(t), st.ID, false)
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, got.Status, "%+v", got.Error)
	require.Empty(t, got.Pending, "its result is kept")

	mid, err := c.ToolResults(ctx(t), st.ID) // the retry, with no results
	require.NoError(t, err)
	require.Equal(t, serve.StatusPending, mid.Status, "%+v", mid.Error)
	require.JSONEq(t, `{"q":"age?"}`, string(mid.Pending[0].Arguments))
	eventuallyParkFiles(t, spill, 1, "the first file gone, the second park's written")
	done, err := c.ToolResults(ctx(t), st.ID, answer(mid.Pending[0].ID, "36"))
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, done.Status, "%+v", done.Error)
	require.JSONEq(t, `"ada:36"`, string(done.Value))
	eventuallyParkFiles(t, spill, 0, "its file is gone")
	_, body, _ := raw(t, "GET", ts.url+"/metrics", "", "")
	require.Contains(t, body, `ptcx_executions_parked{tenant="a"} 0`)
}

// A spilled file that is not the execution's own parked state (corrupt,
// or another execution's) fails the execution, saying why: it is never
// resumed as it.
func TestServer_spill_foreignOrCorruptFileFailsTheExecution(t *testing.T) {
	tests := []struct {
		name string
		bad  func(t *testing.T, own, other string)
		want string
	}{
		{"corrupt", func(t *testing.T, own, _ string) {
			require.NoError(t, os.WriteFile(own, []byte("PTCXSRVP but nothing a parked execution is"), 0o600))
		}, "not a parked execution of ptcx serve"},
		{"another execution's", func(t *testing.T, own, other string) {
			b, err := os.ReadFile(other)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(own, b, 0o600))
		}, "refused, never resumed as this execution"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spill := t.TempDir()
			ts := newServer(t, func(c *serve.Config) {
				c.Store, c.SpillDir = nil, spill
				c.Server.ParkGraceMS = -1 // its bytes written at once, as this test reads them
			})
			c := ts.client(keyA)
			st := pendingOn(t, c, askTwice)
			own := parkFiles(t, spill)[0]
			other := pendingOn(t, c, askTwice)
			var otherFile string
			for _, f := range parkFiles(t, spill) {
				if f != own {
					otherFile = f
				}
			}
			tt.bad(t, own, otherFile)
			got, err := c.ToolResults(ctx(t), st.ID, answer(st.Pending[0].ID, "ada"))
			require.NoError(t, err)
			require.Equal(t, serve.StatusFailed, got.Status)
			require.Equal(t, "INTERNAL", got.Error.Code)
			require.Contains(t, got.Error.Message, "the parked execution could not resume")
			require.Contains(t, got.Error.Message, tt.want)
			require.Contains(t, ts.logs.String(), `"msg":"a parked execution could not resume","execution":"`+st.ID+`"`)

			mid, err := c.ToolResults(ctx(t), other.ID, answer(other.Pending[0].ID, "bob"))
			require.NoError(t, err)
			require.Equal(t, serve.StatusPending, mid.Status, "the other execution is untouched: %+v", mid.Error)
		})
	}
}
