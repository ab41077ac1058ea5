package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/trace"
)

const seededProgram = `const n = await tools.lookup({key: "k"}); console.log("at " + new Date().toISOString()); return [n.key, Math.random()]`

func TestRun_seedAndTrace(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.ts")
	require.NoError(t, os.WriteFile(prog, []byte(seededProgram), 0o644))
	tr := filepath.Join(dir, "trace.jsonl")

	first, stderr, status := ptcx(t, "", "run", "--tools", toolsFile, "--seed", "7", "--trace", tr, prog)
	require.Equal(t, 0, status, stderr)
	again, _, _ := ptcx(t, "", "run", "--tools", toolsFile, "--seed", "7", prog)
	other, _, _ := ptcx(t, "", "run", "--tools", toolsFile, "--seed", "8", prog)
	require.Equal(t, first, again, "one seed, two worlds")
	require.NotEqual(t, first, other)
	require.Contains(t, first, "at 2022-01-01T00:00:00")

	f, err := os.Open(tr)
	require.NoError(t, err)
	defer f.Close()
	rec, err := trace.NewReader(f, 0).Next()
	require.NoError(t, err)
	require.Equal(t, uint64(7), *rec.Seed)
	require.Len(t, rec.Calls, 1)
	require.Equal(t, "lookup", rec.Calls[0].Tool)
	require.Equal(t, strings.TrimSuffix(first, "\n"), rec.Text)

	stdout, stderr, status := ptcx(t, "", "replay", tr)
	require.Equal(t, 0, status, stderr)
	require.Equal(t, rec.ID+": reproduced (1 calls, ok)\n", stdout)
}

func TestReplay_divergenceAndWhatIf(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.ts")
	require.NoError(t, os.WriteFile(prog, []byte(`return (await tools.lookup({key: "a"})).key`), 0o644))
	tr := filepath.Join(dir, "trace.jsonl")
	_, stderr, status := ptcx(t, "", "run", "--tools", toolsFile, "--seed", "1", "--trace", tr, prog)
	require.Equal(t, 0, status, stderr)

	b, err := os.ReadFile(tr)
	require.NoError(t, err)
	changed := filepath.Join(dir, "changed.jsonl")
	edited := strings.Replace(string(b), `tools.lookup({key: \"a\"})).key`, `tools.lookup({key: \"a\"})).key + (await tools.lookup({key: \"b\"})).key`, 1)
	require.NotEqual(t, string(b), edited)
	require.NoError(t, os.WriteFile(changed, []byte(edited), 0o644))

	stdout, _, status := ptcx(t, "", "replay", changed)
	require.Equal(t, exitTool, status)
	require.Contains(t, stdout, `replay diverged at call 2 (extra call): expected no call, got tools.lookup({"key":"b"})`)

	stdout, stderr, status = ptcx(t, "", "replay", "--tools", toolsFile, "--json", changed)
	require.Equal(t, exitTool, status, stderr)
	require.Contains(t, stdout, `"differences":["text: recorded \"a\", replayed \"ab\""`, "the extra call went to the real tool")

	_, stderr, status = ptcx(t, "", "replay", "--id", "nope", tr)
	require.Equal(t, exitTool, status)
	require.Contains(t, stderr, "has no record of call nope")
	_, stderr, status = ptcx(t, "", "replay")
	require.Equal(t, exitUsage, status)
	require.Contains(t, stderr, "want one TRACE file")
}

func TestMCP_seedAndTrace(t *testing.T) {
	tr := filepath.Join(t.TempDir(), "trace.jsonl")
	cs, stderr := serveMCP(t, "--tools", toolsFile, "--seed", "3", "--trace", tr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var texts []string
	for range 2 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": seededProgram, "description": "seeded"}})
		require.NoError(t, err, stderr.String())
		require.False(t, res.IsError)
		texts = append(texts, res.Content[0].(*mcp.TextContent).Text)
	}
	require.Equal(t, texts[0], texts[1], "--seed gives every execution the same world")
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(tr)
		return strings.Count(string(b), "\n") == 2
	}, 10*time.Second, 10*time.Millisecond)
}

// --gate-wait below 1ms, or not a duration, is a usage error.
func TestReplay_gateWaitFlag(t *testing.T) {
	tr := filepath.Join(t.TempDir(), "trace.jsonl")
	require.NoError(t, os.WriteFile(tr, nil, 0o644))
	for v, shown := range map[string]string{"0s": "0s", "-1s": "-1s", "500us": "500µs"} {
		_, stderr, status := ptcx(t, "", "replay", "--gate-wait", v, tr)
		require.Equal(t, 2, status, stderr)
		require.Contains(t, stderr, "--gate-wait "+shown+": want a duration of at least 1ms", v)
	}
	_, stderr, status := ptcx(t, "", "replay", "--gate-wait", "soon", tr)
	require.Equal(t, 2, status, stderr)
	require.Contains(t, stderr, "gate-wait")
	_, stderr, status = ptcx(t, "", "replay", "--gate-wait", "1ms", tr)
	require.Equal(t, 1, status, stderr)
	require.Contains(t, stderr, "has no records", "1ms is accepted: the empty trace is what fails")
}

// A record made without --seed replays against a new world: when its
// outcome then differs, replay says that the record has no seed, and how
// to make one that replays; a seeded record's failure says nothing of it.
func TestReplay_unseededRecordSaysSo(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.ts")
	require.NoError(t, os.WriteFile(prog, []byte(`await tools.lookup({key: "k"}); return Math.random()`), 0o644))
	unseeded := filepath.Join(dir, "unseeded.jsonl")
	_, stderr, status := ptcx(t, "", "run", "--tools", toolsFile, "--trace", unseeded, prog)
	require.Equal(t, 0, status, stderr)

	stdout, _, status := ptcx(t, "", "replay", unseeded)
	require.Equal(t, exitTool, status, stdout)
	require.Contains(t, stdout, "the outcome differs")
	require.Contains(t, stdout, "made without --seed")
	require.Contains(t, stdout, "--seed N")
	stdout, _, status = ptcx(t, "", "replay", "--json", unseeded)
	require.Equal(t, exitTool, status)
	require.Contains(t, stdout, `"unseeded":true`)

	// Seeded: reproduced, no note; made to differ, still no note.
	seeded := filepath.Join(dir, "seeded.jsonl")
	_, stderr, status = ptcx(t, "", "run", "--tools", toolsFile, "--seed", "3", "--trace", seeded, prog)
	require.Equal(t, 0, status, stderr)
	stdout, _, status = ptcx(t, "", "replay", seeded)
	require.Equal(t, exitOK, status, stdout)
	require.NotContains(t, stdout, "without --seed")
	b, err := os.ReadFile(seeded)
	require.NoError(t, err)
	edited := strings.Replace(string(b), `return Math.random()`, `return Math.random() + 1`, 1)
	require.NotEqual(t, string(b), edited)
	require.NoError(t, os.WriteFile(seeded, []byte(edited), 0o644))
	stdout, _, status = ptcx(t, "", "replay", "--json", seeded)
	require.Equal(t, exitTool, status, stdout)
	require.NotContains(t, stdout, "unseeded")
}

// A run whose command tool raises its result's label in an envelope, and
// whose program reads and passes a handle, replays clean; the same record
// with the handle tool no longer a handle tool diverges.
func TestReplay_raisedLabelAndHandles(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	require.NoError(t, os.WriteFile(tools, []byte(`{"mode": "ptc", "tools": [
  {"name": "inbox", "description": "Mail.", "concurrency_safe": true, "reply": "envelope",
   "command": ["/bin/sh", "-c", "printf '{\"value\":\"pay\",\"labels\":{\"integrity\":\"untrusted\"}}'"]},
  {"name": "doc", "description": "A document.", "concurrency_safe": true, "handle": true,
   "command": ["/bin/sh", "-c", "printf '{\"body\":\"numbers\"}'"]},
  {"name": "send", "description": "Send.", "command": ["/bin/sh", "-c", "cat"]}
]}`), 0o644))
	prog := filepath.Join(dir, "p.ts")
	require.NoError(t, os.WriteFile(prog, []byte(`const m = await tools.inbox({}); const d = await tools.doc({});
const j = await d.json(); const s = await tools.send({d}); return [m, j.body, s.d.body]`), 0o644))
	tr := filepath.Join(dir, "trace.jsonl")
	out, stderr, status := ptcx(t, "", "run", "--tools", tools, "--seed", "3", "--trace", tr, prog)
	require.Equal(t, 0, status, stderr)
	require.Contains(t, out, `"numbers"`)

	stdout, stderr, status := ptcx(t, "", "replay", tr)
	require.Equal(t, 0, status, stderr+stdout)
	require.Contains(t, stdout, ": reproduced (3 calls, ok)")

	b, err := os.ReadFile(tr)
	require.NoError(t, err)
	edited := strings.Replace(string(b), `"doc":{"handle":true}`, `"doc":{}`, 1)
	require.NotEqual(t, string(b), edited)
	changed := filepath.Join(dir, "changed.jsonl")
	require.NoError(t, os.WriteFile(changed, []byte(edited), 0o644))
	stdout, _, status = ptcx(t, "", "replay", changed)
	require.Equal(t, exitTool, status)
	require.Contains(t, stdout, `replay diverged at call 2 (handle): tools.doc({}) answered the program with a handle in the trace, with its value in the replay`)
}
