//go:build unix

package workspace_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/proc"
	"github.com/ptcx/ptcx/workspace"
)

func TestBash_disabledByDefault(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	for _, tool := range e.ws.Tools() {
		require.NotEqual(t, "bash", tool.Name)
	}
	_, found := e.reg.Get("deployment", "bash")
	require.False(t, found)
}

func TestBash_results(t *testing.T) {
	e := newEnv(t, workspace.Options{AllowBash: true})
	e.file("data.txt", "one\ntwo\n")
	for _, tc := range []struct {
		name, command string
		want          bashOut
	}{
		{"stdout", "echo hi", bashOut{ExitCode: 0, Stdout: "hi\n"}},
		{"stderr", "echo oops >&2", bashOut{ExitCode: 0, Stderr: "oops\n"}},
		{"exit code", "echo partial; exit 3", bashOut{ExitCode: 3, Stdout: "partial\n"}},
		{"runs in the root", "wc -l < data.txt", bashOut{Stdout: "2\n"}},
		{"stdin is empty", "cat; echo done", bashOut{Stdout: "done\n"}},
		{"killed by a signal", "kill -TERM $$", bashOut{ExitCode: 128 + int(syscall.SIGTERM)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, ok[bashOut](t, e, "bash", m{"command": tc.command}))
		})
	}
	out, err := e.call(t, context.Background(), "bash", m{"command": "echo out; echo err >&2; exit 1"})
	require.NoError(t, err)
	require.Equal(t, "out\n[stderr]\nerr\n[exit code 1]", out.Text)
}

func TestBash_environment(t *testing.T) {
	t.Setenv("PTCX_TEST_SECRET", "hunter2")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "hunter3")
	e := newEnv(t, workspace.Options{AllowBash: true})
	r := ok[bashOut](t, e, "bash", m{"command": "env"})
	require.NotContains(t, r.Stdout, "PTCX_TEST_SECRET")
	require.NotContains(t, r.Stdout, "hunter")
	vars := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		k, v, _ := strings.Cut(line, "=")
		vars[k] = v
	}
	require.Equal(t, e.root, vars["HOME"])
	require.Equal(t, "dumb", vars["TERM"])
	require.NotEmpty(t, vars["PATH"])
	r = ok[bashOut](t, e, "bash", m{"command": "cd && pwd"})
	require.Equal(t, e.root+"\n", r.Stdout)
}

func TestBash_outputCap(t *testing.T) {
	e := newEnv(t, workspace.Options{AllowBash: true, MaxOutputBytes: 1000})
	r := ok[bashOut](t, e, "bash", m{"command": "yes | head -c 100000; echo tail >&2"})
	require.True(t, r.Truncated)
	require.Equal(t, 0, r.ExitCode)
	require.Equal(t, strings.Repeat("y\n", 500), r.Stdout)
	require.Empty(t, r.Stderr, "the budget is shared: stdout used it all")
	out, err := e.call(t, context.Background(), "bash", m{"command": "yes | head -c 5000"})
	require.NoError(t, err)
	require.Contains(t, out.Text, "[output truncated: only the beginning is shown]\n[exit code 0]")

	r = ok[bashOut](t, e, "bash", m{"command": "printf 'é%.0s' $(seq 600)"}) // 1200 bytes of 2-byte runes
	require.True(t, r.Truncated)
	require.Equal(t, strings.Repeat("é", 500), r.Stdout)
}

// TestBash_timeoutKillsForkedChild: a command that forks a child that
// never exits, then hangs, is killed at its timeout with the child.
func TestBash_timeoutKillsForkedChild(t *testing.T) {
	e := newEnv(t, workspace.Options{AllowBash: true})
	start := time.Now()
	r := ok[bashOut](t, e, "bash", m{"command": "sleep 1000 & echo $! > child.pid; echo waiting; sleep 1000", "timeout_ms": 300})
	require.Less(t, time.Since(start), 10*time.Second)
	require.True(t, r.TimedOut)
	require.Equal(t, 128+int(syscall.SIGKILL), r.ExitCode)
	require.Equal(t, "waiting\n", r.Stdout)
	requireGone(t, pidIn(t, e, "child.pid"))

	out, err := e.call(t, context.Background(), "bash", m{"command": "sleep 10", "timeout_ms": 50})
	require.NoError(t, err)
	require.Contains(t, out.Text, "[timed out after 50ms: the command and every process it started were killed]")
}

// TestBash_backgroundChildDoesNotHang: the shell exits at once but leaves
// a child holding its stdout. The tool returns at once and the child dies.
func TestBash_backgroundChildDoesNotHang(t *testing.T) {
	e := newEnv(t, workspace.Options{AllowBash: true})
	start := time.Now()
	r := ok[bashOut](t, e, "bash", m{"command": "sleep 1000 & echo $! > child.pid; echo started"})
	require.Less(t, time.Since(start), 3*time.Second)
	require.Equal(t, bashOut{Stdout: "started\n"}, r)
	requireGone(t, pidIn(t, e, "child.pid"))
}

// record, run by a shell, appends the shell's host pid (from /proc/self:
// the host's view even inside a PID namespace) to leftover.pids.
const record = `read -r p _ < /proc/self/stat; echo $p >> leftover.pids`

// TestBash_leavesNothingBehind: whatever a command leaves running and
// however it ends (exit, non-zero exit, its timeout, a cancelled call), the
// tool returns without waiting for the leftover, and the leftover is dead
// when it has.
func TestBash_leavesNothingBehind(t *testing.T) {
	leftovers := []struct {
		name, script string
		escapes      bool // it leaves the process group
	}{
		{"setsid", `setsid sh -c '` + record + `; exec sleep 300' &`, true},
		{"double fork into a new session", `( setsid sh -c '` + record + `; exec sleep 300' & ) &`, true},
		{"ignores SIGTERM", `sh -c 'trap "" TERM; ` + record + `; exec sleep 300' &`, false},
		{"closes its stdout and stderr", `sh -c 'exec >&- 2>&-; ` + record + `; exec sleep 300' &`, false},
		{"keeps the pipes open", `sh -c '` + record + `; exec sleep 300' &`, false},
	}
	endings := []struct {
		name, script string
		timeoutMS    int64
		cancel       bool
		want         bashOut
	}{
		{"exits 0", "exit 0", 0, false, bashOut{Stdout: "ready\n"}},
		{"exits 3", "exit 3", 0, false, bashOut{ExitCode: 3, Stdout: "ready\n"}},
		{"times out", "sleep 300", 3000, false, bashOut{ExitCode: 128 + int(syscall.SIGKILL), Stdout: "ready\n", TimedOut: true}},
		{"is cancelled", "sleep 300", 0, true, bashOut{}},
	}
	for _, lo := range leftovers {
		for _, end := range endings {
			t.Run(lo.name+"/"+end.name, func(t *testing.T) {
				t.Parallel()
				if lo.escapes && !proc.Active().Contained() {
					t.Skip("the documented weaker guarantee of " + proc.Active().String() + ": " + proc.Active().Describe())
				}
				e := newEnv(t, workspace.Options{AllowBash: true})
				args := m{"command": lo.script + "\nuntil [ -s leftover.pids ]; do sleep 0.01; done; echo ready\n" + end.script}
				if end.timeoutMS > 0 {
					args["timeout_ms"] = end.timeoutMS
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if end.cancel {
					go func() {
						for ctx.Err() == nil {
							if b, err := os.ReadFile(filepath.Join(e.root, "leftover.pids")); err == nil && len(b) > 0 {
								cancel()
							}
							time.Sleep(10 * time.Millisecond)
						}
					}()
				}
				start := time.Now()
				out, err := e.call(t, ctx, "bash", args)
				require.Less(t, time.Since(start), 30*time.Second)
				if end.cancel {
					require.ErrorIs(t, err, context.Canceled)
				} else {
					require.NoError(t, err)
					var got bashOut
					require.NoError(t, json.Unmarshal(out.Value, &got))
					require.Equal(t, end.want, got)
				}
				requireGone(t, pidIn(t, e, "leftover.pids"))
			})
		}
	}
}

func TestBash_timeoutCannotBeRaised(t *testing.T) {
	e := newEnv(t, workspace.Options{AllowBash: true, BashTimeout: 200 * time.Millisecond})
	start := time.Now()
	for _, ms := range []int64{60000, 1 << 62} {
		r := ok[bashOut](t, e, "bash", m{"command": "sleep 10", "timeout_ms": ms})
		require.True(t, r.TimedOut)
	}
	require.Less(t, time.Since(start), 10*time.Second)
}

func TestBash_cancelKillsGroup(t *testing.T) {
	e := newEnv(t, workspace.Options{AllowBash: true})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(e.root, "child.pid")); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, err := e.call(t, ctx, "bash", m{"command": "sleep 1000 & echo $! > child.pid.tmp; mv child.pid.tmp child.pid; sleep 1000"})
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "command stopped before it finished")
	requireGone(t, pidIn(t, e, "child.pid"))
}

func TestBash_badInput(t *testing.T) {
	e := newEnv(t, workspace.Options{AllowBash: true})
	require.ErrorContains(t, fail(t, e, "bash", m{"command": "  "}), "command is empty")
	require.Error(t, fail(t, e, "bash", m{"command": "true", "timeout_ms": 0}))
	require.Error(t, fail(t, e, "bash", m{}))
}

// pidIn reads a pid a command wrote into a file of the workspace.
func pidIn(t *testing.T, e *env, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, name))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return pid
}

// requireGone waits briefly for pid to be dead: gone (ESRCH), or a zombie
// that is not this process's to reap (an orphan, reaped by the system's
// init in its own time).
func requireGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) || orphanZombie(pid) {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL) // do not leak it past the test
			t.Fatalf("process %d is still running after the tool returned", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// orphanZombie reports whether pid is a zombie whose parent is not this
// process.
func orphanZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])) // comm may hold spaces, not ')'

	return len(fields) > 1 && fields[0] == "Z" && fields[1] != strconv.Itoa(os.Getpid())
}
