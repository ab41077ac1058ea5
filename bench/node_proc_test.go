package bench_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/bench"
)

// fakeNode is an executable standing in for node: a shell script that
// reads the driver's jobs as driver.mjs does and answers as body says.
func fakeNode(t *testing.T, body string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in for node is a shell script")
	}
	path := filepath.Join(t.TempDir(), "node")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return path
}

// counting answers every job with one sample and a note naming its
// process and how many jobs that process has had.
const counting = `n=0
while read -r line; do
  n=$((n+1))
  echo "{\"samples\":[1000],\"note\":\"job $n of $$\"}"
done`

var jobNote = regexp.MustCompile(`^job (\d+) of (\d+)$`)

// One driver process serves a workload's rounds; the next workload has a
// new one.
func TestNode_oneProcessPerWorkload(t *testing.T) {
	peer, done := bench.NewNode(bench.ImplNodeWorker, bench.NodeConfig{Node: fakeNode(t, counting)})
	defer done()
	ws := []bench.Workload{workload(t, "trivial_e2e"), workload(t, "trivial_e2e_new")}
	results, err := bench.Run(context.Background(), []bench.Impl{peer}, ws, bench.Params{Runs: 3, Rounds: 3}, nil)
	require.NoError(t, err)
	require.Len(t, results, 2)
	first := jobNote.FindStringSubmatch(results[0].Note)
	second := jobNote.FindStringSubmatch(results[1].Note)
	require.NotNil(t, first, results[0].Note)
	require.NotNil(t, second, results[1].Note)
	require.Equal(t, "3", first[1], "the three rounds in one process")
	require.Equal(t, "3", second[1])
	require.NotEqual(t, first[2], second[2], "a new process for the next workload")
}

// A driver that ends without answering fails the job with what it said on
// its standard error; the next job starts a new driver.
func TestNode_driverEnds(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	script := `if [ ! -e ` + marker + ` ]; then touch ` + marker + `; read -r line; echo "broken" >&2; exit 3; fi
` + counting
	peer, done := bench.NewNode(bench.ImplNodeWorker, bench.NodeConfig{Node: fakeNode(t, script)})
	defer done()
	w := workload(t, "trivial_e2e")
	j, err := w.Expand(bench.Params{Runs: 1})
	require.NoError(t, err)
	_, err = peer.Measure(context.Background(), j)
	require.ErrorContains(t, err, "node worker: the driver ended before answering (stderr: broken)")
	raw, err := peer.Measure(context.Background(), j)
	require.NoError(t, err)
	require.Regexp(t, `^job 1 of \d+$`, raw.Note)
}

// A job past its bound, or whose context ends, fails, and its driver is
// stopped (killed when it does not end with its input); the next job has
// a new one. A line that is not the driver's fails the job too.
func TestNode_driverHangsOrBabbles(t *testing.T) {
	w := workload(t, "trivial_e2e")
	j, err := w.Expand(bench.Params{Runs: 1})
	require.NoError(t, err)

	hang := fakeNode(t, `read -r line; exec sleep 60`)
	peer, done := bench.NewNode(bench.ImplNodeWorker, bench.NodeConfig{Node: hang, Timeout: 50 * time.Millisecond})
	defer done()
	_, err = peer.Measure(context.Background(), j)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "(the job's bound is 50ms)")

	peer2, done2 := bench.NewNode(bench.ImplNodeWorker, bench.NodeConfig{Node: hang})
	defer done2()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = peer2.Measure(ctx, j)
	require.ErrorIs(t, err, context.Canceled)

	marker := filepath.Join(t.TempDir(), "babbled")
	babble := fakeNode(t, `if [ ! -e `+marker+` ]; then touch `+marker+`; read -r line; echo "hello"; fi
`+counting)
	peer3, done3 := bench.NewNode(bench.ImplNodeWorker, bench.NodeConfig{Node: babble})
	defer done3()
	_, err = peer3.Measure(context.Background(), j)
	require.ErrorContains(t, err, `the driver's line "hello"`)
	raw, err := peer3.Measure(context.Background(), j)
	require.NoError(t, err)
	require.Regexp(t, `^job 1 of \d+$`, raw.Note, "a new driver after the one that babbled")
}
