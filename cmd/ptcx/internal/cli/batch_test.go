package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMain lets the tests run the CLI in a child process: the test binary
// itself, with childEnv set, is ptcx.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

const childEnv = "PTCX_CLI_CHILD"

// child returns a command running ptcx with args in a process of its own.
func child(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	return cmd
}

func writeItems(t *testing.T, lines []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "items.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	return path
}

// readLines decodes an output file's lines.
func readLines(t *testing.T, path string) []batchLine {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []batchLine
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l == "" {
			continue
		}
		var bl batchLine
		require.NoError(t, json.Unmarshal([]byte(l), &bl), "line %q", l)
		out = append(out, bl)
	}
	return out
}

func item(id, code string, extra ...string) string {
	b, _ := json.Marshal(map[string]string{"id": id, "code": code})
	s := string(b)
	if len(extra) > 0 {
		s = strings.TrimSuffix(s, "}") + "," + strings.Join(extra, ",") + "}"
	}
	return s
}

// variedPrograms are n programs that read the random source and the clock,
// order timers, fan out to a tool of random latency, and fail at random.
func variedPrograms(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		var code string
		switch i % 5 {
		case 0:
			code = fmt.Sprintf(`return [Math.random(), Math.random() * %d]`, i)
		case 1:
			code = `return {now: Date.now(), iso: new Date().toISOString(), perf: performance.now()}`
		case 2:
			code = fmt.Sprintf(`const o = []; await Promise.all([%d, %d, %d].map((ms, k) => new Promise(r => setTimeout(() => { o.push(k); r(); }, ms)))); return o`,
				3*(i%4), 3*(i%3), 3*(i%2))
		case 3:
			code = fmt.Sprintf(`const r = await Promise.all([1, 2, 3].map(k => tools.lookup({key: "k%d-" + k}))); return r.map(x => x.key).join(",") + " " + Math.random()`, i)
		case 4:
			code = fmt.Sprintf(`if (Math.random() < 0.5) throw new Error("unlucky %d"); console.log("lucky"); return Math.random()`, i)
		}
		lines[i] = item(fmt.Sprintf("p%03d", i), code, fmt.Sprintf(`"seed":%d`, i*7919))
	}
	return lines
}

// randomLatencyTools is a tools file whose lookup answers after 5 to 25 ms.
func randomLatencyTools(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tools.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"mode": "ptc", "tools": [{"name": "lookup", "description": "Echo a key, slowly.",
		"input_schema": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}, "concurrency_safe": true,
		"command": ["/bin/sh", "-c", "sleep 0.0$(( $$ % 3 ))5; cat"]}]}`), 0o644))
	return path
}

func TestBatch_determinism(t *testing.T) {
	items := writeItems(t, variedPrograms(500))
	tools := randomLatencyTools(t)
	dir := t.TempDir()
	outs := []string{filepath.Join(dir, "p1.jsonl"), filepath.Join(dir, "p4.jsonl")}
	for i, parallel := range []string{"1", "4"} {
		cmd := child(t, "batch", "--tools", tools, "--no-builtin", "--parallel", parallel, "--no-timings", "--out", outs[i], items)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "500 runs")
	}
	first, err := os.ReadFile(outs[0])
	require.NoError(t, err)
	second, err := os.ReadFile(outs[1])
	require.NoError(t, err)
	require.Equal(t, string(first), string(second), "--parallel 1 and --parallel 4 disagree")

	lines := readLines(t, outs[0])
	require.Len(t, lines, 500)
	outcomes := map[string]int{}
	for i, l := range lines {
		require.Equal(t, fmt.Sprintf("p%03d", i), l.ID, "not in input order")
		outcomes[outcomeOfLine(l)]++
	}
	require.Positive(t, outcomes["ok"])
	require.Positive(t, outcomes["exception"], "no program failed: the seeds do not vary the world")
	require.Len(t, lines[3].Calls, 3)
	require.Contains(t, lines[1].Text, "2022-01-01T00:00:00")
}

func TestBatch_resumeAfterKill(t *testing.T) {
	const n = 120
	lines := make([]string, n)
	for i := range lines {
		lines[i] = item(fmt.Sprintf("i%03d", i), fmt.Sprintf(`await new Promise(r => setTimeout(r, 40)); return %d`, i))
	}
	items := writeItems(t, lines)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	cmd := child(t, "batch", "--parallel", "2", "--order", "completion", "--out", out, items)
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if strings.Count(string(b), "\n") >= 10 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the batch wrote nothing in 60 s")
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	before := readLines(t, out)
	require.Less(t, len(before), n, "the batch finished before it was killed")
	// A line cut short by the kill is dropped and its run made again.
	f, err := os.OpenFile(out, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"id":"i119","ok":tr`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	stdout, stderr, status := ptcx(t, "", "batch", "--parallel", "2", "--resume", "--out", out, items)
	require.Equal(t, 0, status, stderr)
	require.Empty(t, stdout)
	require.Contains(t, stderr, fmt.Sprintf("%d runs (%d from the earlier batch, --resume)", n, len(before)))
	seen := map[string]int{}
	for _, l := range readLines(t, out) {
		seen[l.ID]++
		require.True(t, l.OK, l.Text)
	}
	require.Len(t, seen, n, "an item was lost")
	for id, c := range seen {
		require.Equal(t, 1, c, "item %s was written %d times", id, c)
	}
}

func TestBatch_malformedLines(t *testing.T) {
	good := item("ok", `return 1`)
	tests := []struct {
		name, line, want string
	}{
		{"not JSON", `{"id":`, "line 2: not an item"},
		{"no id", `{"code":"return 1"}`, `line 2: no "id"`},
		{"no code", `{"id":"x"}`, `line 2: item "x" has no "code"`},
		{"unknown field", `{"id":"x","code":"return 1","cod":1}`, `unknown field "cod"`},
		{"duplicate id", good, `line 2: item "ok" again (first on line 1)`},
		{"bad replay", item("x", "return 1", `"replay":{"version":4}`), `item "x": replay: trace version 4`},
		{"unknown beside metadata", item("x", "return 1", `"metadata":{"a":1}`, `"input":"q"`), `unknown field "input"`},
		{"bad metadata JSON", `{"id":"x","code":"return 1","metadata":{"a":}}`, "line 2: not an item"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items := writeItems(t, []string{good, tt.line, item("last", `return 2`)})
			stdout, stderr, status := ptcx(t, "", "batch", "--no-builtin", items)
			require.Equal(t, 0, status, stderr)
			require.Contains(t, stderr, tt.want)
			require.Contains(t, stderr, "1 malformed lines skipped")
			require.Equal(t, 2, strings.Count(stdout, "\n"), "the good items ran")

			stdout, stderr, status = ptcx(t, "", "batch", "--no-builtin", "--bad", "fail", "--parallel", "1", items)
			require.Equal(t, exitTool, status)
			require.Contains(t, stderr, "line 2 is malformed (--bad fail): the batch stops")
			require.NotContains(t, stdout, `"last"`)
		})
	}
}

func TestBatch_maxLineBytes(t *testing.T) {
	line := item("a", `return 1`)
	tests := []struct {
		name string
		max  int
		ran  bool
	}{
		{"below", len(line) + 1, true},
		{"at", len(line), true},
		{"past", len(line) - 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items := writeItems(t, []string{line})
			stdout, stderr, status := ptcx(t, "", "batch", "--no-builtin", "--max-line-bytes", fmt.Sprint(tt.max), items)
			require.Equal(t, 0, status, stderr)
			if tt.ran {
				require.Contains(t, stdout, `"id":"a"`)
				return
			}
			require.Empty(t, stdout)
			require.Contains(t, stderr, fmt.Sprintf("line 1: the line is over %d bytes (--max-line-bytes)", tt.max))
		})
	}
}

func TestBatch_repeat(t *testing.T) {
	items := writeItems(t, []string{
		item("fixed", `return 1`, `"seed":1`),
		item("random", `return Math.random()`, `"seed":1`),
		item("flaky", `if (Math.random() < 0.5) throw new Error("no"); return 1`, `"seed":4`),
	})
	stdout, stderr, status := ptcx(t, "", "batch", "--no-builtin", "--repeat", "8", "--order", "completion", items)
	require.Equal(t, 0, status, stderr)
	require.Equal(t, 24, strings.Count(stdout, "\n"))
	require.Contains(t, stderr, "pass^8: 3 items complete, 1 agree (all 8 runs equal), 2 pass (all 8 runs ok), 0 incomplete")
	require.Contains(t, stderr, "latency: p50 ")
}

func TestBatch_usage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"batch"}, "want one ITEMS file"},
		{[]string{"batch", "--parallel", "0", "x"}, "--parallel 0: want at least 1"},
		{[]string{"batch", "--repeat", "0", "x"}, "--repeat 0: want 1 to 1000"},
		{[]string{"batch", "--repeat", "1001", "x"}, "--repeat 1001: want 1 to 1000"},
		{[]string{"batch", "--order", "random", "x"}, `--order "random": want input or completion`},
		{[]string{"batch", "--bad", "ignore", "x"}, `--bad "ignore": want skip or fail`},
		{[]string{"batch", "--resume", "x"}, "--resume needs --out"},
		{[]string{"batch", "--seed", "-1", "x"}, "want an unsigned 64-bit integer"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, stderr, status := ptcx(t, "", tt.args...)
			require.Equal(t, exitUsage, status)
			require.Contains(t, stderr, tt.want)
		})
	}
}

// Every line of a batch's trace replays; an item may be replayed against a
// trace from the batch input.
func TestBatch_traceAndReplay(t *testing.T) {
	items := writeItems(t, variedPrograms(20))
	dir := t.TempDir()
	tr := filepath.Join(dir, "trace.jsonl")
	_, stderr, status := ptcx(t, "", "batch", "--tools", randomLatencyTools(t), "--no-builtin", "--trace", tr, items)
	require.Equal(t, 0, status, stderr)
	stdout, stderr, status := ptcx(t, "", "replay", tr)
	require.Equal(t, 0, status, stdout+stderr)
	require.Equal(t, 20, strings.Count(stdout, ": reproduced ("), stdout)

	f, err := os.Open(tr)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var fanout string
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"id":"p003"`) {
			fanout = sc.Text()
		}
	}
	require.NotEmpty(t, fanout)
	changed := item("changed", `const r = await tools.lookup({key: "other"}); return r`, `"replay":`+fanout)
	same := item("same", `const r = await Promise.all([1, 2, 3].map(k => tools.lookup({key: "k3-" + k}))); return r.map(x => x.key).join(",") + " " + Math.random()`, `"replay":`+fanout)
	stdout, stderr, status = ptcx(t, "", "batch", "--no-builtin", writeItems(t, []string{changed, same}))
	require.Equal(t, 0, status, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 2)
	require.Contains(t, lines[0], `"divergence":{"index":1,"reason":"args","expected_tool":"lookup","expected_args":{"key":"k3-1"}`)
	require.NotContains(t, lines[1], `"divergence"`)
	require.NotContains(t, lines[1], `"differences"`)
	require.Contains(t, stderr, "diverged 1")
}

// A batch stopped by a signal writes no line for the runs it cut short, so
// --resume runs them again.
func TestBatch_interrupted(t *testing.T) {
	const n = 60
	lines := make([]string, n)
	for i := range lines {
		lines[i] = item(fmt.Sprintf("i%03d", i), `await new Promise(r => setTimeout(r, 50)); return 1`)
	}
	items := writeItems(t, lines)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	cmd := child(t, "batch", "--parallel", "2", "--out", out, items)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if strings.Count(string(b), "\n") >= 4 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the batch wrote nothing in 60 s")
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err := cmd.Wait()
	require.Error(t, err, "a stopped batch exits non-zero")
	require.Contains(t, stderr.String(), "the batch was stopped")
	before := readLines(t, out)
	for _, l := range before {
		require.True(t, l.OK, "a run cut short was written: %s", l.Text)
	}
	_, errs, status := ptcx(t, "", "batch", "--parallel", "2", "--resume", "--out", out, items)
	require.Equal(t, 0, status, errs)
	require.Len(t, readLines(t, out), n)
}

// An item's metadata and target (inspect-ai samples carry them) reach each
// of its output lines as given: any JSON value, numbers and characters
// untouched; without them a line has neither member.
func TestBatch_metadataAndTargetPassThrough(t *testing.T) {
	meta := `{"sample":{"epoch":2,"tags":["a","<b>","é"]},"big":123456789012345678901234567890,"ratio":1.50,"nothing":null}`
	items := writeItems(t, []string{
		item("m", `return 1`, `"metadata":`+meta, `"target":["42","forty-two"]`),
		item("t", `return 2`, `"target":"2"`),
		item("n", `return 3`, `"metadata":null`),
		item("plain", `return 4`),
	})
	out := filepath.Join(t.TempDir(), "out.jsonl")
	_, stderr, status := ptcx(t, "", "batch", "--no-builtin", "--repeat", "2", "--out", out, items)
	require.Equal(t, 0, status, stderr)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Len(t, lines, 8)
	for _, l := range lines {
		switch {
		case strings.Contains(l, `"id":"m"`):
			require.Contains(t, l, `"metadata":`+meta+`,"target":["42","forty-two"]`)
		case strings.Contains(l, `"id":"t"`):
			require.Contains(t, l, `"target":"2"`)
			require.NotContains(t, l, `"metadata"`)
		case strings.Contains(l, `"id":"n"`):
			require.Contains(t, l, `"metadata":null`)
		default:
			require.NotContains(t, l, `"metadata"`)
			require.NotContains(t, l, `"target"`)
		}
	}
	got := readLines(t, out)
	require.True(t, got[0].OK)
	require.Contains(t, stderr, "pass^2: 4 items complete, 4 agree", "metadata is not part of the outcome")
}
