package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/guest/python"
	"github.com/ptcx/ptcx/internal/testkit"
)

// gatherProgram reads two files of the workspace with the built-in read
// tool (a Go tool), in parallel.
const gatherProgram = `import asyncio
a, b = await asyncio.gather(tools.read(path="a.txt"), tools.read(path="b.txt"))
print("read", a["path"], b["path"])
a["content"].strip() + " " + b["content"].strip()
`

// ptcx run FILE.py picks Python from the extension and enables it: two
// calls of a Go tool with asyncio.gather, the last expression the result.
func TestRunPython_gather(t *testing.T) {
	testkit.RequirePython(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("world\n"), 0o644))
	prog := filepath.Join(t.TempDir(), "gather.py")
	require.NoError(t, os.WriteFile(prog, []byte(gatherProgram), 0o644))

	out, errOut, status := ptcx(t, "", "run", "--json", "--workspace", dir, prog)
	require.Equal(t, exitOK, status, "stdout %s\nstderr %s", out, errOut)
	c := decodeCall(t, out)
	require.True(t, c.OK, out)
	var v struct {
		Logs   []string        `json:"logs"`
		Result json.RawMessage `json:"result"`
	}
	require.NoError(t, json.Unmarshal(c.Value, &v))
	require.Equal(t, []string{"read a.txt b.txt"}, v.Logs)
	require.JSONEq(t, `"hello world"`, string(v.Result))
	require.NotNil(t, c.Ledger)
	require.Len(t, c.Ledger.Calls, 2)
}

// Without the Python guest in the build, a Python program fails before
// anything starts, saying how to build it.
func TestRunPython_notBuilt(t *testing.T) {
	if python.Wasm() != nil {
		t.Skip("this build has the Python guest")
	}
	prog := filepath.Join(t.TempDir(), "x.py")
	require.NoError(t, os.WriteFile(prog, []byte("1 + 1\n"), 0o644))
	out, errOut, status := ptcx(t, "", "run", "--no-builtin", prog)
	require.Equal(t, exitTool, status, out)
	require.Contains(t, errOut, "python programs: wasmhost: this build of ptcx has no Python guest: build it with `make guest-python`")

	// A TypeScript program with Python enabled fails the same way: the
	// deployment cannot run what it enables.
	ts := filepath.Join(t.TempDir(), "x.ts")
	require.NoError(t, os.WriteFile(ts, []byte("return 1"), 0o644))
	_, errOut, status = ptcx(t, "", "run", "--no-builtin", "--languages", "typescript,python", ts)
	require.Equal(t, exitTool, status)
	require.Contains(t, errOut, "make guest-python")
}

// A batch item names its language; one the batch does not enable fails
// that item with INVALID_ARGS naming those it does, and the rest run.
func TestBatch_languageNotEnabled(t *testing.T) {
	items := writeItems(t, []string{item("ts", "return 1", `"language":"typescript"`), item("py", "1 + 1", `"language":"python"`)})
	out := filepath.Join(t.TempDir(), "out.jsonl")
	_, stderr, status := ptcx(t, "", "batch", "--no-builtin", "--order", "input", "--out", out, items)
	require.Equal(t, exitOK, status, stderr)
	lines := readLines(t, out)
	require.Len(t, lines, 2)
	require.True(t, lines[0].OK, lines[0].Text)
	require.False(t, lines[1].OK)
	require.Equal(t, "INVALID_ARGS", string(lines[1].Error.Code))
	require.Contains(t, lines[1].Error.Message, `language "python" is not one this deployment runs: it runs typescript`)
}
