package toolsfile_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/proc"
)

// loadSpec loads a tools file of one tool "t" from spec.
func loadSpec(t *testing.T, spec map[string]any) (*executor.Executor, string) {
	t.Helper()
	spec["name"] = "t"
	b, err := json.Marshal([]any{spec})
	require.NoError(t, err)
	return load(t, string(b), "")
}

// TestCommand_environment: a command gets the allowlist and what its "env"
// passes or sets; a secret of ptcx's environment reaches it only when
// passed.
func TestCommand_environment(t *testing.T) {
	t.Setenv("PTCX_TEST_SECRET", "hunter2")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "hunter3")
	t.Setenv("HOME", "/home/ptcx-test")
	t.Setenv("PATH", "/usr/bin:/bin")
	for _, tt := range []struct {
		name string
		env  map[string]any
		want map[string]string // "" means absent
	}{
		{"allowlist only", nil, map[string]string{
			"PATH": "/usr/bin:/bin", "TERM": "dumb", "PTCX_TEST_SECRET": "", "AWS_SECRET_ACCESS_KEY": "", "HOME": "",
		}},
		{"passed", map[string]any{"pass": []string{"HOME", "PTCX_TEST_SECRET", "PTCX_TEST_NOT_SET"}}, map[string]string{
			"HOME": "/home/ptcx-test", "PTCX_TEST_SECRET": "hunter2", "PTCX_TEST_NOT_SET": "", "AWS_SECRET_ACCESS_KEY": "",
		}},
		{"set wins", map[string]any{"pass": []string{"HOME"}, "set": map[string]string{"HOME": "/elsewhere", "TERM": "xterm", "UNITS": "metric"}}, map[string]string{
			"HOME": "/elsewhere", "TERM": "xterm", "UNITS": "metric", "PTCX_TEST_SECRET": "",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := map[string]any{"command": []string{"/bin/sh", "-c", `env > env.txt; echo '{}'`}}
			if tt.env != nil {
				spec["env"] = tt.env
			}
			e, dir := loadSpec(t, spec)
			r := e.Execute(context.Background(), executor.Call{Name: "t"})
			require.True(t, r.OK(), r.Text)
			data, err := os.ReadFile(filepath.Join(dir, "env.txt"))
			require.NoError(t, err)
			require.NotContains(t, string(data), "hunter3")
			got := map[string]string{}
			for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
				k, v, _ := strings.Cut(line, "=")
				got[k] = v
			}
			for k, v := range tt.want {
				require.Equal(t, v, got[k], "%s in\n%s", k, data)
			}
		})
	}
}

// record, run by a shell, appends the shell's host pid (from /proc/self:
// the host's view even inside a PID namespace) to leftover.pids.
const record = `read -r p _ < /proc/self/stat; echo $p >> leftover.pids`

// TestCommand_leavesNoProcess: whatever a command leaves running and
// however it ends (it answers, it fails, its timeout, a cancelled call),
// the call returns and the leftover is dead.
func TestCommand_leavesNoProcess(t *testing.T) {
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
		timeoutMS    int
		cancel       bool
		code         api.Code // "" for success
	}{
		{"answers", `echo '{}'`, 0, false, ""},
		{"fails", `exit 3`, 0, false, api.CodeToolFailed},
		{"times out", `sleep 300`, 3000, false, api.CodeToolTimeout},
		{"is cancelled", `sleep 300`, 0, true, api.CodeAborted},
	}
	for _, lo := range leftovers {
		for _, end := range endings {
			t.Run(lo.name+"/"+end.name, func(t *testing.T) {
				t.Parallel()
				if lo.escapes && !proc.Active().Contained() {
					t.Skip("the documented weaker guarantee of " + proc.Active().String() + ": " + proc.Active().Describe())
				}
				script := lo.script + "\nuntil [ -s leftover.pids ]; do sleep 0.01; done\n" + end.script
				spec := map[string]any{"command": []string{"/bin/sh", "-c", script}}
				if end.timeoutMS > 0 {
					spec["timeout_ms"] = end.timeoutMS
				}
				e, dir := loadSpec(t, spec)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if end.cancel {
					go func() {
						for ctx.Err() == nil {
							if b, err := os.ReadFile(filepath.Join(dir, "leftover.pids")); err == nil && len(b) > 0 {
								cancel()
							}
							time.Sleep(10 * time.Millisecond)
						}
					}()
				}
				start := time.Now()
				r := e.Execute(ctx, executor.Call{Name: "t"})
				require.Less(t, time.Since(start), 30*time.Second)
				if end.code == "" {
					require.True(t, r.OK(), r.Text)
				} else {
					require.NotNil(t, r.Err, r.Text)
					require.Equal(t, end.code, r.Err.Code, r.Text)
				}
				b, err := os.ReadFile(filepath.Join(dir, "leftover.pids"))
				require.NoError(t, err)
				pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
				require.NoError(t, err)
				require.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 10*time.Millisecond,
					"process %d was left behind", pid)
			})
		}
	}
}

// alive reports whether pid runs, or is a zombie this process must reap
// (an orphan's zombie is the system init's to reap).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) < 2 || fields[0] != "Z" || fields[1] == strconv.Itoa(os.Getpid())
}

// TestCommand_envelope: a command declared "reply": "envelope" prints its
// value with labels, which raise the result's label above the tool's
// declared one and never lower it; a malformed envelope is
// INVALID_TOOL_OUTPUT.
func TestCommand_envelope(t *testing.T) {
	for _, tt := range []struct {
		name, out string
		want      api.Label
		code      api.Code
	}{
		{"raises", `{"value": {"n": 1}, "labels": {"integrity": "untrusted"}}`, api.Label{Integrity: api.Untrusted, Confidentiality: api.Private}, ""},
		{"cannot lower", `{"value": 1, "labels": {"integrity": "trusted", "confidentiality": "public"}}`, api.Label{Confidentiality: api.Private}, ""},
		{"no labels", `{"value": 1}`, api.Label{Confidentiality: api.Private}, ""},
		{"no value", `{}`, api.Label{Confidentiality: api.Private}, ""},
		{"not an object", `[1]`, api.Label{}, api.CodeInvalidToolOutput},
		{"a bad label", `{"value": 1, "labels": {"integrity": "meh"}}`, api.Label{}, api.CodeInvalidToolOutput},
		{"another member", `{"value": 1, "extra": 2}`, api.Label{}, api.CodeInvalidToolOutput},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := loadSpec(t, map[string]any{"command": []string{"/bin/sh", "-c", "echo '" + tt.out + "'"}, "reply": "envelope",
				"labels": map[string]string{"confidentiality": "private"}})
			r := e.Execute(context.Background(), executor.Call{Name: "t"})
			if tt.code != "" {
				require.Equal(t, tt.code, api.CodeOf(r.AsError()), r.Text)
				return
			}
			require.True(t, r.OK(), r.Text)
			require.Equal(t, tt.want, r.Labels)
		})
	}
}
