//go:build linux

package hostile_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/trace"
)

// The record → replay round trip on the corpus: every case runs again in a
// child of its own, with a trace recorder on its executor, and every
// run_code execution it made is replayed against its record (no real
// tools) and must reproduce it — failures to the same failure, text, logs
// and result byte for byte.

// replayEnv names the case a replay child runs.
const replayEnv = "PTCX_HOSTILE_REPLAY_CASE"

// replayChildTimeout bounds one replay child: the case (at most
// childTimeout) and the replays of its programs.
const replayChildTimeout = 90 * time.Second

// notReplayable are the cases whose programs replay cannot reproduce, and
// why. A case that makes no run_code call (a model-direct tool call) has
// nothing to replay and is not listed: the test reports it.
var notReplayable = map[string]string{
	"grep of a 256 MB line after the run":            "ends at its wall deadline (a timeout) while the grep is in flight; replay answers the grep at once, with the error it got, so the program ends on that error",
	"read of a 256 MB line after the run":            "the read and the wall deadline end together: the record is a timeout when the deadline reached the program first and an exception when the read's error did; replay answers the read at once, so it always ends on the error",
	"a run that finishes while cancelled":            "its outcomes are the caller's cancellation racing the run (ABORTED_BEFORE_DISPATCH or not); replay does not cancel",
	"16 concurrent programs of 0.3 s CPU, 2 s limit": "whether each program ends ok or at its 2 s compute limit depends on how 16 programs at once share the cores; replay runs them one by one",
	// The corpus itself accepts either of two limits for these: which one a
	// run reaches first depends on the machine and its load.
	"repeat 1<<27 inside a native":            "timeout or memory, whichever limit the run reaches first",
	"memory bomb, string doubling":            "memory or exception, whichever the allocator reaches first",
	"memory bomb, caught and retried":         "memory or timeout, whichever limit the run reaches first",
	"microtask flood":                         "timeout or memory, whichever limit the run reaches first",
	"timer flood":                             "fails on whichever limit the run reaches first",
	"python: sorted of a huge list":           "memory or timeout, whichever limit the run reaches first",
	"python: memory bomb, caught and retried": "memory or timeout, whichever limit the run reaches first",
}

// replayReport is what a replay child prints: one JSON line.
type replayReport struct {
	Case    string         `json:"case"`
	Replays []replayedExec `json:"replays"`
}

// replayedExec is the replay of one recorded execution.
type replayedExec struct {
	ID      string   `json:"id"`
	Outcome string   `json:"outcome"`
	Calls   int      `json:"calls"`
	Problem []string `json:"problem"` // the divergence and differences; empty when it reproduced
}

// TestHostileReplayChild is the replay child's side. Without the
// environment variable it checks that every case notReplayable names
// exists.
func TestHostileReplayChild(t *testing.T) {
	name := os.Getenv(replayEnv)
	if name == "" {
		for n := range notReplayable {
			_, ok := caseNamed(n)
			if !ok && !withPython { // the Python cases are left out here
				for _, c := range pythonCases {
					ok = ok || c.name == n
				}
			}
			require.True(t, ok, "notReplayable names %q, which is no case", n)
		}
		return
	}
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: childAddressSpace, Max: childAddressSpace}))
	require.NoError(t, os.Setenv("PTCX_HOSTILE_SECRET", "hunter2"))
	c, ok := caseNamed(name)
	require.True(t, ok, "no case %q", name)
	e := newEnv(t, childLimits)
	var mu sync.Mutex
	var records []trace.Record
	rec := trace.NewRecorder(e.exec.Registry(), func(r trace.Record) {
		mu.Lock()
		records = append(records, r)
		mu.Unlock()
	})
	cfg := executor.NewConfig().WithRuntime(e.rt).WithLimits(childLimits)
	if withPython {
		cfg = cfg.WithLanguages(api.LanguageTypeScript, api.LanguagePython)
	}
	ex, err := executor.New(e.exec.Registry(), rec.Install(cfg))
	require.NoError(t, err)
	e.exec = ex

	_, _ = c.run(context.Background(), e) // its outcome is TestHostile's
	mu.Lock()
	defer mu.Unlock()
	out := replayReport{Case: c.name, Replays: []replayedExec{}}
	for _, r := range records {
		// Each record round-trips through its JSON line, as ptcx replay reads it.
		var line bytes.Buffer
		require.NoError(t, trace.Encode(&line, r))
		decoded, err := trace.Decode(bytes.TrimSpace(line.Bytes()))
		require.NoError(t, err, "the record of %s", r.ID)
		rep, err := trace.Replay(context.Background(), decoded, trace.ReplayConfig{Runtime: e.rt})
		require.NoError(t, err, "replaying %s", r.ID)
		x := replayedExec{ID: r.ID, Outcome: r.Outcome, Calls: len(r.Calls), Problem: rep.Differences}
		if rep.Divergence != nil {
			x.Problem = append(x.Problem, rep.Divergence.Error())
		}
		out.Replays = append(out.Replays, x)
	}
	b, err := json.Marshal(out)
	require.NoError(t, err)
	fmt.Printf("\nREPLAY %s\n", b)
}

// runReplayChild re-executes the test binary for one case's replay.
func runReplayChild(c hostileCase) (replayReport, string) {
	ctx, cancel := context.WithTimeout(context.Background(), replayChildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHostileReplayChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), replayEnv+"="+c.name, "GOMEMLIMIT="+childMemLimit)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	var rep replayReport
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "REPLAY "); ok {
			if jerr := json.Unmarshal([]byte(line), &rep); jerr != nil {
				return rep, "an unreadable report: " + jerr.Error()
			}
		}
	}
	switch {
	case ctx.Err() != nil:
		return rep, fmt.Sprintf("the replay child did not finish within %s", replayChildTimeout)
	case err != nil:
		return rep, fmt.Sprintf("the replay child failed (%v): %s", err, tail(stdout.String()+stderr.String(), 1500))
	case rep.Case == "":
		return rep, "the replay child printed no report: " + tail(stdout.String()+stderr.String(), 1500)
	}
	return rep, ""
}

// TestHostileReplay records every case's programs and replays them, two
// children at a time, and logs a table of what replayed.
func TestHostileReplay(t *testing.T) {
	type run struct {
		rep    replayReport
		failed string
	}
	runs := make([]run, len(cases))
	sem := make(chan struct{}, childParallelism)
	var wg sync.WaitGroup
	for i, c := range cases {
		if _, skip := notReplayable[c.name]; skip {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			runs[i].rep, runs[i].failed = runReplayChild(c)
		})
	}
	wg.Wait()

	var table strings.Builder
	table.WriteString("| case | executions | replay |\n|---|---:|---|\n")
	for i, c := range cases {
		status := "reproduced"
		switch r := runs[i]; {
		case notReplayable[c.name] != "":
			status = "not replayed: " + notReplayable[c.name]
		case r.failed != "":
			status = "child failed"
		case len(r.rep.Replays) == 0:
			status = "no run_code execution (a model-direct call)"
		default:
			for _, x := range r.rep.Replays {
				if len(x.Problem) > 0 {
					status = "differs: " + firstLine(strings.Join(x.Problem, "; "))
				}
			}
		}
		fmt.Fprintf(&table, "| %s | %d | %s |\n", c.name, len(runs[i].rep.Replays), status)
	}
	t.Log("\n" + table.String())

	for i, c := range cases {
		if notReplayable[c.name] != "" {
			continue
		}
		t.Run(c.family+"/"+c.name, func(t *testing.T) {
			r := runs[i]
			require.Empty(t, r.failed)
			for _, x := range r.rep.Replays {
				require.Empty(t, x.Problem, "execution %s (%s, %d calls) did not replay to its record", x.ID, x.Outcome, x.Calls)
			}
		})
	}
}
