package wasmhost

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/runners"
)

// goid is the current goroutine's id, from its stack's first line.
func goid() int {
	var buf [64]byte
	b := bytes.TrimPrefix(buf[:runtime.Stack(buf[:], false)], []byte("goroutine "))
	n, _ := strconv.Atoi(string(b[:bytes.IndexByte(b, ' ')]))
	return n
}

// waitGoroutines waits until at most n goroutines run, for at most
// within (internal/testkit's, which this package's own tests cannot import).
func waitGoroutines(t *testing.T, n int, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); runtime.NumGoroutine() > n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines left behind: want at most %d, have %d\n%s", n, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
	}
}

// waitFor polls cond every millisecond for at most 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 5*time.Second, time.Millisecond, what)
}

// Runs one after another execute on one runner, and the runners leave when
// the Runtime closes. (Each waits on a call: a run that settles in its
// first export takes no runner, TestRuntime_Run_settlesOnTheCallersGoroutine.)
func TestRuntime_Run_reusesItsRunner(t *testing.T) {
	runtime.GC()
	before := runtime.NumGoroutine()
	rt, err := New(context.Background(), NewConfig().WithPool(0))
	require.NoError(t, err)
	rt.runners = runners.New(rt.closing.Done(), runnersMaxIdle, time.Hour)
	p := Program{JS: `return (await tools.echo({n: 1})).n`, Tools: []string{"echo"}}
	run := func() {
		out, err := rt.Run(context.Background(), p, okTools)
		require.NoError(t, err)
		require.Equal(t, "1", string(out.Result))
	}
	// A run may come to its runner before the runner, done with the run
	// before, counts itself waiting: it then starts another, and both
	// wait from then on. So each wait is for at least one.
	run()
	waitFor(t, "the run's runner waits", func() bool { return rt.runners.Waiting() >= 1 })
	n := runtime.NumGoroutine()
	for range 20 {
		run()
		waitFor(t, "the run's runner waits", func() bool { return rt.runners.Waiting() >= 1 })
	}
	// A run started just before its runner receives starts another one,
	// so the runners may be up to max; never more. Each such race leaves
	// one more waiting, so at most max were ever started for 21 runs.
	require.LessOrEqual(t, rt.runners.Started(), runnersMaxIdle, "21 runs one after another reuse their runners")
	require.LessOrEqual(t, runtime.NumGoroutine(), n+runnersMaxIdle, "20 runs later, no more goroutines than waiting runners")
	require.LessOrEqual(t, rt.runners.Waiting(), runnersMaxIdle)
	require.NoError(t, rt.Close(context.Background()))
	waitFor(t, "no runner waits once closed", func() bool { return rt.runners.Waiting() == 0 })
	waitGoroutines(t, before, 5*time.Second)
}

// A run of the embedded guest starts on its caller's goroutine: one that
// settles in its first export (no call, or calls not awaited) never takes
// a runner; one left waiting goes on on a runner from there; a guest given
// by Config.WithGuest always runs on a runner, which Run can abandon.
func TestRuntime_Run_settlesOnTheCallersGoroutine(t *testing.T) {
	ctx := context.Background()
	rt, err := New(ctx, NewConfig().WithPool(0))
	require.NoError(t, err)
	defer rt.Close(ctx)
	require.True(t, rt.startInline, "the embedded guest starts inline")
	rt.runners = runners.New(rt.closing.Done(), runnersMaxIdle, time.Hour)
	for _, tt := range []struct {
		js   string
		kind api.Kind // "" for the result 1
	}{
		{js: `return 1`},
		{js: `tools.echo({n: 1}); return 1`},
		{js: `throw new Error("x")`, kind: api.KindException},
		{js: `for (;;) {}`, kind: api.KindTimeout},
	} {
		out, err := rt.Run(ctx, Program{JS: tt.js, Tools: []string{"echo"}, Limits: api.Limits{ComputeTime: 50 * time.Millisecond}}, okTools)
		if tt.kind == "" {
			require.NoError(t, err, tt.js)
			require.Equal(t, "1", string(out.Result), tt.js)
			continue
		}
		var re *RunError
		require.ErrorAs(t, err, &re, tt.js)
		require.Equal(t, tt.kind, re.Kind, tt.js)
		require.NotErrorIs(t, err, ErrAbandoned, tt.js)
	}
	// A runner started would wait for the next run for an hour.
	require.Never(t, func() bool { return rt.runners.Waiting() > 0 }, 100*time.Millisecond, time.Millisecond, "no runner was started")
	if embeddedPythonWasm() != nil { // the Python guest shares the runners, made now from rt's
		out, err := rt.Run(ctx, Program{JS: "1 + 1", Language: api.LanguagePython}, okTools)
		require.NoError(t, err)
		require.Equal(t, "2", string(out.Result))
		require.Never(t, func() bool { return rt.runners.Waiting() > 0 }, 100*time.Millisecond, time.Millisecond, "Python: no runner was started")
	}
	out, err := rt.Run(ctx, Program{JS: `return (await tools.echo({n: 2})).n`, Tools: []string{"echo"}}, okTools)
	require.NoError(t, err)
	require.Equal(t, "2", string(out.Result))
	waitFor(t, "the waiting run's runner waits", func() bool { return rt.runners.Waiting() == 1 })

	custom, err := New(ctx, NewConfig().WithPool(0).WithGuest(embeddedWasm()))
	require.NoError(t, err)
	defer custom.Close(ctx)
	require.False(t, custom.startInline, "a guest given by WithGuest runs on runners")
	custom.runners = runners.New(custom.closing.Done(), runnersMaxIdle, time.Hour)
	out, err = custom.Run(ctx, Program{JS: `return 1`}, okTools)
	require.NoError(t, err)
	require.Equal(t, "1", string(out.Result))
	waitFor(t, "its runner waits", func() bool { return custom.runners.Waiting() == 1 })
}
