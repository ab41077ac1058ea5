package wasmhost_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// A memory a run suspended from, or a resume used, is kept as a resume
// spare and readied off the request path (an instance restored from the
// image into it), and the next resume takes that instance: each of a row
// of resumes of the same snapshot gives the program's answer, and each
// took a readied instance. On an engine whose memory is not the host's
// there is none, and the answers are the same.
func TestRuntime_Resume_readiedSpares(t *testing.T) {
	rt, err := wasmhost.New(context.Background(), testConfig().WithPool(0))
	require.NoError(t, err)
	s := suspendAt(t, rt, heapProgram, api.Limits{}, &recordingTools{}, always)
	spares := engineUnderTest() == wasmhost.EngineWazero
	for i := range 6 {
		if spares {
			require.Eventually(t, func() bool { return rt.PoolStats().ResumeSpareReadied >= int64(i+1) }, 20*time.Second, time.Millisecond,
				"resume %d: the memory suspended from, or the last resume's, is readied", i)
		}
		out, err := rt.Resume(context.Background(), s.Snapshot, &recordingTools{}, wasmhost.Resumption{})
		require.NoError(t, err)
		require.JSONEq(t, heapAnswer, string(out.Result), "resume %d", i)
		st := rt.PoolStats()
		if spares {
			require.Equal(t, int64(i+1), st.ResumeSpareTaken, "resume %d: took the readied instance", i)
		} else {
			require.Zero(t, st.ResumeSpareReadied)
			require.Zero(t, st.ResumeSpareTaken)
		}
	}
	requireHealthy(t, rt)
	require.NoError(t, rt.Close(context.Background()))
	requireNoSpareGoroutines(t)
}

// A Runtime closed just after a resume, while its memory is readied as a
// resume spare, closes cleanly and leaves no goroutine, again and again;
// under -race, nothing of the readying races the close.
func TestRuntime_Close_whileReadyingResumeSpares(t *testing.T) {
	for i := range 12 {
		rt, err := wasmhost.New(context.Background(), testConfig().WithPool(0))
		require.NoError(t, err)
		s := suspendAt(t, rt, heapProgram, api.Limits{}, &recordingTools{}, always)
		out, err := rt.Resume(context.Background(), s.Snapshot, &recordingTools{}, wasmhost.Resumption{})
		require.NoError(t, err)
		require.JSONEq(t, heapAnswer, string(out.Result), "round %d", i)
		if i%3 == 1 { // sometimes after the readying, sometimes during it
			time.Sleep(time.Duration(i) * time.Millisecond)
		}
		require.NoError(t, rt.Close(context.Background()), "round %d", i)
		_, err = rt.Resume(context.Background(), s.Snapshot, &recordingTools{}, wasmhost.Resumption{})
		require.ErrorIs(t, err, wasmhost.ErrClosed)
	}
	requireNoSpareGoroutines(t)
}

// requireNoSpareGoroutines waits until no goroutine readies a resume
// spare or releases one: once a Runtime is closed, none may be left.
func requireNoSpareGoroutines(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	var left string
	require.Eventually(t, func() bool {
		left = ""
		for g := range strings.SplitSeq(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "readyResumeSpares") || strings.Contains(g, "keepResumeSpare") {
				left += g + "\n\n"
			}
		}
		return left == ""
	}, 20*time.Second, 10*time.Millisecond, "goroutines of closed Runtimes' resume spares are left")
	require.Empty(t, left)
}
