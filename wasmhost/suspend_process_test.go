package wasmhost_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// crossProcessProgram uses calls, Promise.all, a timer, logs, closures and
// a Map across its suspensions.
const crossProcessProgram = `
	const seen = new Map();
	const note = k => v => { seen.set(k, v); return v; };
	console.log("start", Math.random());
	await tools.echo({step: 1}).then(note("one"));
	await new Promise(r => setTimeout(r, 20));
	const [a, b] = await Promise.all([tools.add({a: 2, b: 3}), tools.echo({step: 2})]);
	console.log("sum", a, Date.now());
	return {seen: [...seen], a, b, r: Math.random()};`

// TestRuntime_Resume_acrossProcesses suspends a run at every await, each
// time in a new process: the first starts the run, each next one resumes
// the snapshot the one before wrote. The outcome, logs and calls are those
// of the same program run straight through in this process.
func TestRuntime_Resume_acrossProcesses(t *testing.T) {
	if mode := os.Getenv("PTCX_SNAPSHOT_CHILD"); mode != "" {
		snapshotChild(t, mode, os.Getenv("PTCX_SNAPSHOT_DIR"))
		return
	}
	rt := sharedRuntime(t)
	straightTools := &recordingTools{}
	out, err := rt.Run(context.Background(), wasmhost.Program{JS: crossProcessProgram, Tools: suspendTools,
		World: &wasmhost.World{Seed: 11}}, straightTools)
	require.NoError(t, err)

	dir := t.TempDir()
	child := func(mode string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRuntime_Resume_acrossProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "PTCX_SNAPSHOT_CHILD="+mode, "PTCX_SNAPSHOT_DIR="+dir, "PTCX_SNAPSHOT_CACHE="+cacheDir)
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "child %s: %s", mode, b)
		state, err := os.ReadFile(filepath.Join(dir, "state"))
		require.NoError(t, err)
		return string(state)
	}
	state := child("start")
	processes := 1
	for state == "suspended" {
		processes++
		require.Less(t, processes, 20)
		state = child("resume")
	}
	require.Equal(t, "done", state)
	require.Greater(t, processes, 3)
	var got struct {
		Result json.RawMessage
		Logs   []string
	}
	b, err := os.ReadFile(filepath.Join(dir, "outcome"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &got))
	require.JSONEq(t, string(out.Result), string(got.Result))
	require.Equal(t, out.Logs, got.Logs)
	calls, err := os.ReadFile(filepath.Join(dir, "calls"))
	require.NoError(t, err)
	require.Equal(t, strings.Join(straightTools.log(), "\n")+"\n", string(calls))
}

// snapshotChild is one process of TestRuntime_Resume_acrossProcesses: it
// starts or resumes the run, suspends it at its first quiescent point, and
// writes the snapshot or the outcome.
func snapshotChild(t *testing.T, mode, dir string) {
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, wasmhost.NewConfig().WithCompilationCacheDir(os.Getenv("PTCX_SNAPSHOT_CACHE")))
	require.NoError(t, err)
	defer rt.Close(ctx)
	tools := &recordingTools{}
	var out wasmhost.Outcome
	if mode == "start" {
		out, err = rt.Run(ctx, wasmhost.Program{JS: crossProcessProgram, Tools: suspendTools,
			World: &wasmhost.World{Seed: 11}, Suspend: always}, tools)
	} else {
		snap, rerr := os.ReadFile(filepath.Join(dir, "snapshot"))
		require.NoError(t, rerr)
		out, err = rt.Resume(ctx, snap, tools, wasmhost.Resumption{Suspend: always, Limits: api.Limits{}})
	}
	require.NoError(t, err)
	calls, err := os.OpenFile(filepath.Join(dir, "calls"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	for _, c := range tools.log() {
		_, err = calls.WriteString(c + "\n")
		require.NoError(t, err)
	}
	require.NoError(t, calls.Close())
	write := func(name string, b []byte) { require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600)) }
	if out.Suspended != nil {
		write("snapshot", out.Suspended.Snapshot)
		write("state", []byte("suspended"))
		return
	}
	b, err := json.Marshal(map[string]any{"Result": out.Result, "Logs": out.Logs})
	require.NoError(t, err)
	write("outcome", b)
	write("state", []byte("done"))
}
