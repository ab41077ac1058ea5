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
	"github.com/ptcx/ptcx/internal/text"
	"github.com/ptcx/ptcx/wasmhost"
)

// The environment of a child: which case it runs.
const caseEnv = "PTCX_HOSTILE_CASE"

// tableEnv names a file the parent writes its table to (for the docs).
const tableEnv = "PTCX_HOSTILE_TABLE"

// Bounds on a child: its address space (a hard limit, so that a runaway
// allocation fails inside the child instead of taking the machine's memory)
// and its Go heap's soft limit, both far above what any case should use,
// and its time.
const (
	childMemLimit    = "3GiB"
	childTimeout     = 45 * time.Second
	childParallelism = 2
)

// childAddressSpace is the child's address space: 8 GiB on wazero. On
// wasmtime (PTCX_ENGINE=wasmtime) it is 256 GiB: wasmtime reserves 4 GiB
// and a guard region of address space for every linear memory (which makes
// its bounds checks free), whatever the memory holds; the memory itself is
// still bounded by the store's limit and the committed-memory cap.
var childAddressSpace = func() uint64 {
	if os.Getenv(wasmhost.EngineEnv) == wasmhost.EngineWasmtime {
		return 256 << 30
	}
	return 8 << 30
}()

// normalProgram is the run that must work after every case, in the same
// process: a program with a nested call.
const normalProgram = `const r = await tools.glob({pattern: "*.none"}); return {matches: r.matches.length, sum: 1 + 1}`

// report is what a child prints: one JSON line.
type report struct {
	Case     string  `json:"case"`
	Outcome  string  `json:"outcome"`
	Text     string  `json:"text"`
	Seconds  float64 `json:"seconds"`     // wall time of the case
	CPU      float64 `json:"cpu_seconds"` // CPU time the child used during the case
	CPUAfter float64 `json:"cpu_after"`   // when watched: CPU seconds in the 2 s after the case
	Check    string  `json:"check"`       // what a check in the child found wrong
	Next     string  `json:"next"`        // the normal run's result, or its failure
}

// The limits every case's executor has: the defaults, with a wall time that
// ends a stuck case in seconds. Spinning cases set their own compute time.
var childLimits = api.Limits{WallTime: 30 * time.Second}

// TestHostileChild is the child's side: it runs the case its environment
// names, then the normal program, and prints a report. Without the
// environment variable it is a test that checks the corpus's own shape.
func TestHostileChild(t *testing.T) {
	name := os.Getenv(caseEnv)
	if name == "" {
		seen := map[string]bool{}
		for _, c := range cases {
			require.False(t, seen[c.name], "two cases named %q", c.name)
			seen[c.name] = true
			require.NotEmpty(t, c.want, c.name)
			require.NotNil(t, c.run, c.name)
		}
		return
	}
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: childAddressSpace, Max: childAddressSpace}))
	require.NoError(t, os.Setenv("PTCX_HOSTILE_SECRET", "hunter2"))
	c, ok := caseNamed(name)
	require.True(t, ok, "no case %q", name)
	e := newEnv(t, childLimits)
	ctx := context.Background()

	start, cpuStart := time.Now(), cpu()
	r, check := c.run(ctx, e)
	rep := report{Case: c.name, Outcome: outcome(r), Text: firstLine(r.Text), Seconds: time.Since(start).Seconds(),
		CPU: (cpu() - cpuStart).Seconds(), Check: check}
	if c.watchCPU {
		before := cpu()
		time.Sleep(2 * time.Second)
		rep.CPUAfter = (cpu() - before).Seconds()
	}
	next := e.run(ctx, normalProgram, nil)
	if rep.Next = result(next); !next.OK() {
		rep.Next = outcome(next) + ": " + firstLine(next.Text)
	}
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	fmt.Printf("\nHOSTILE %s\n", b)
}

func caseNamed(name string) (hostileCase, bool) {
	for _, c := range cases {
		if c.name == name {
			return c, true
		}
	}
	return hostileCase{}, false
}

// childRun is what the parent saw of one child.
type childRun struct {
	rep    report
	rssMB  float64
	failed string // why the child itself failed (crash, timeout, no report)
}

// runChild re-executes the test binary for one case.
func runChild(c hostileCase) childRun {
	ctx, cancel := context.WithTimeout(context.Background(), childTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHostileChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), caseEnv+"="+c.name, "GOMEMLIMIT="+childMemLimit)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	var run childRun
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			run.rssMB = float64(ru.Maxrss) / 1024 // kilobytes on Linux
		}
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "HOSTILE "); ok {
			if jerr := json.Unmarshal([]byte(line), &run.rep); jerr != nil {
				run.failed = "an unreadable report: " + jerr.Error()
			}
		}
	}
	switch {
	case ctx.Err() != nil:
		run.failed = fmt.Sprintf("the child did not finish within %s", childTimeout)
	case err != nil:
		run.failed = fmt.Sprintf("the child failed (%v): %s", err, tail(stdout.String()+stderr.String(), 1500))
	case run.rep.Case == "" && run.failed == "":
		run.failed = "the child printed no report: " + tail(stdout.String()+stderr.String(), 1500)
	}
	return run
}

// tail is the end of s, at most n bytes, marked when cut.
func tail(s string, n int) string {
	if len(s) > n {
		return text.Ellipsis + text.Tail(s, n)
	}
	return s
}

// matches reports whether outcome is one that want accepts.
func matches(want []string, outcome string) bool {
	for _, w := range want {
		switch {
		case w == outcome:
			return true
		case w == "FAILED" && outcome != "OK" && !strings.HasPrefix(outcome, "INTERNAL"):
			return true
		case strings.HasSuffix(w, "/*") && strings.HasPrefix(outcome, strings.TrimSuffix(w, "*")):
			return true
		}
	}
	return false
}

// TestHostile runs every case in a child process, two at a time, and checks
// its outcome, time and peak RSS, that the child survived it, and that the
// next normal run in the child returned the normal result. The table of
// what happened is logged, and written to the file PTCX_HOSTILE_TABLE
// names.
func TestHostile(t *testing.T) {
	if os.Getenv(caseEnv) != "" {
		t.Skip("a child runs TestHostileChild only")
	}
	compileGuests(t)
	runs := make([]childRun, len(cases))
	sem := make(chan struct{}, childParallelism)
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			runs[i] = runChild(c)
		})
	}
	wg.Wait()

	table := renderTable(runs)
	t.Log("\n" + table)
	if path := os.Getenv(tableEnv); path != "" {
		require.NoError(t, os.WriteFile(path, []byte(table), 0o644))
	}
	for i, c := range cases {
		t.Run(c.family+"/"+c.name, func(t *testing.T) {
			run := runs[i]
			require.Empty(t, run.failed, "the host did not survive the case")
			rep := run.rep
			require.True(t, matches(c.want, rep.Outcome), "outcome %s, want one of %v: %s", rep.Outcome, c.want, rep.Text)
			require.Empty(t, rep.Check, "outcome %s: %s", rep.Outcome, rep.Text)
			maxRSS := c.maxRSSMB
			if maxRSS == 0 {
				maxRSS = defaultMaxRSSMB
			}
			require.Less(t, run.rssMB, float64(maxRSS), "the host's peak RSS, in MB")
			// The work a case costs the host is judged in CPU time, which
			// a loaded machine does not inflate; wall time only has to
			// show that nothing hung.
			maxSeconds := c.maxSeconds
			if maxSeconds == 0 {
				maxSeconds = 20
			}
			require.Less(t, rep.CPU, maxSeconds*raceCPU, "CPU seconds the case took (times raceCPU under -race)")
			require.Less(t, rep.Seconds, maxWallSeconds, "wall seconds the case took: nothing may hang")
			if c.watchCPU {
				require.Less(t, rep.CPUAfter, 0.5*raceCPU, "CPU seconds the host spent in the 2 s after the run ended (0.5 s, times raceCPU under -race)")
			}
			require.JSONEq(t, `{"matches": 0, "sum": 2}`, rep.Next, "the next normal run")
		})
	}
}

// compileEnv makes a child compile the guests and do nothing else
// (compileGuests).
const compileEnv = "PTCX_HOSTILE_COMPILE"

// compileGuests compiles the guests the children run into the compilation
// cache they share (NewConfig's) before any starts: compiling the Python
// guest with wasmtime's Cranelift took longer than a child's timeout on a
// loaded 2-core machine, so that children compiling it at once were all
// stopped before one could store it. A child of its own compiles them: a
// child's peak RSS counts its parent's at the fork, which the guests'
// compilation would raise past the cases' bounds.
func compileGuests(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHostileCompile$", "-test.count=1")
	cmd.Env = append(os.Environ(), compileEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "compile the guests:\n%s", out)
}

// TestHostileCompile is compileGuests's child.
func TestHostileCompile(t *testing.T) {
	if os.Getenv(compileEnv) == "" {
		t.Skip("compileGuests's child only")
	}
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, wasmhost.NewConfig().WithPool(0))
	require.NoError(t, err, "the sandbox needs the guest (run `make guest`)")
	defer rt.Close(ctx)
	if withPython {
		require.NoError(t, rt.Prepare(ctx, api.LanguagePython))
	}
}

// maxWallSeconds bounds any case's wall time: the child's runs end at 30 s
// of wall time (childLimits), so past this something hung.
const maxWallSeconds = 60.0

// renderTable is the table of runs: case, outcome, seconds, peak RSS.
func renderTable(runs []childRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| family | case | outcome | seconds (CPU) | peak RSS MB | next run |\n|---|---|---|---:|---:|---|\n")
	for i, c := range cases {
		run := runs[i]
		out, next := run.rep.Outcome, "normal"
		if run.failed != "" {
			out, next = "host died: "+firstLine(run.failed), "-"
		} else if !jsonEqual(run.rep.Next, `{"matches": 0, "sum": 2}`) {
			next = firstLine(run.rep.Next)
		}
		if run.rep.Check != "" {
			out += " (" + firstLine(run.rep.Check) + ")"
		}
		if c.watchCPU {
			out += fmt.Sprintf("; %.1f s CPU after", run.rep.CPUAfter)
		}
		secs := "-"
		if run.failed == "" {
			secs = fmt.Sprintf("%.2f (%.2f CPU)", run.rep.Seconds, run.rep.CPU)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.0f | %s |\n", c.family, c.name, strings.ReplaceAll(out, "|", "\\|"), secs, run.rssMB, next)
	}
	return b.String()
}
