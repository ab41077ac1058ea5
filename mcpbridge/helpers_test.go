//go:build linux

package mcpbridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/mcpbridge"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// upstreamBin is testdata/upstream, built once for the package.
var upstreamBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpbridge-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	upstreamBin = filepath.Join(dir, "upstream")
	build := exec.Command(goTool(), "build", "-o", upstreamBin, "./testdata/upstream")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the test upstream:", err)
		os.Exit(1)
	}
	code := m.Run()
	testkit.Close()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// goTool is the go command that is running the tests.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// env is a registry with one bridged upstream and an executor over it.
type env struct {
	reg  *registry.Registry
	exec *executor.Executor
	b    *mcpbridge.Bridge
}

// upstream returns the test upstream with the prefix "up" and extra flags.
func upstream(flags ...string) mcpbridge.Upstream {
	return mcpbridge.Upstream{Command: append([]string{upstreamBin}, flags...), Prefix: "up"}
}

// connect bridges u into a fresh registry (mode as given) and closes the
// bridge when the test ends.
func connect(t *testing.T, u mcpbridge.Upstream, mode api.Mode, cfg executor.Config) *env {
	t.Helper()
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, mode))
	b, err := mcpbridge.Connect(context.Background(), reg, registry.Deployment, u)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	e, err := executor.New(reg, cfg)
	require.NoError(t, err)
	return &env{reg: reg, exec: e, b: b}
}

// call makes a model-direct call through the executor.
func (v *env) call(ctx context.Context, name, args string) api.Result {
	return v.exec.Execute(ctx, executor.Call{Name: name, Args: json.RawMessage(args)})
}

// ok makes a call that must succeed and returns its value.
func (v *env) ok(t *testing.T, name, args string) json.RawMessage {
	t.Helper()
	r := v.call(context.Background(), name, args)
	require.Nil(t, r.Err, "%s: %s", name, r.Text)
	return r.Value
}

// field decodes one integer field of an object value.
func field(t *testing.T, v json.RawMessage, name string) int {
	t.Helper()
	var m map[string]int
	require.NoError(t, json.Unmarshal(v, &m))
	n, ok := m[name]
	require.True(t, ok, "no %q in %s", name, v)
	return n
}

// pid asks the upstream for its process ID.
func (v *env) pid(t *testing.T) int {
	t.Helper()
	return field(t, v.ok(t, "up.pid", `{}`), "pid")
}

// stat reads one of the upstream's counters.
func (v *env) stat(t *testing.T, name string) int {
	t.Helper()
	return field(t, v.ok(t, "up.stats", `{}`), name)
}

// eventually waits for cond, failing after a bound generous enough that
// only a real hang reaches it.
func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	require.Eventually(t, cond, 20*time.Second, 10*time.Millisecond, what)
}

// gone reports whether no live process has pid: /proc has no entry for it,
// or it is a zombie (dead, waiting to be reaped by its parent).
func gone(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the command name, which is in parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z'
}

func sharedRuntime(t *testing.T) *wasmhost.Runtime { return testkit.Sandbox(t) }
