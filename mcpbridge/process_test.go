//go:build linux

package mcpbridge_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/proc"
	"github.com/ptcx/ptcx/mcpbridge"
	"github.com/ptcx/ptcx/registry"
)

// escaping returns an upstream whose shell first starts two children that
// leave its process group (setsid, and a double fork into a new session),
// each recording its host pid in the file it returns, then execs the test
// upstream.
func escaping(t *testing.T) (mcpbridge.Upstream, string) {
	t.Helper()
	if !proc.Active().Contained() {
		t.Skip("the documented weaker guarantee of " + proc.Active().String() + ": " + proc.Active().Describe())
	}
	pids := filepath.Join(t.TempDir(), "pids")
	record := `read -r p _ < /proc/self/stat; echo $p >> ` + pids
	script := `setsid sh -c '` + record + `; exec sleep 300' &
( setsid sh -c '` + record + `; exec sleep 300' & ) &
until [ "$(wc -l < ` + pids + ` 2>/dev/null)" = 2 ]; do sleep 0.01; done
exec ` + upstreamBin
	return mcpbridge.Upstream{Command: []string{"/bin/sh", "-c", script}, Prefix: "up"}, pids
}

func readPids(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var pids []int
	for f := range strings.FieldsSeq(string(data)) {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err)
		pids = append(pids, pid)
	}
	require.Len(t, pids, 2)
	return pids
}

func TestBridge_Close_killsEscapedChildren(t *testing.T) {
	u, pidFile := escaping(t)
	reg := registry.New()
	b, err := mcpbridge.Connect(context.Background(), reg, registry.Deployment, u)
	require.NoError(t, err)
	pids := readPids(t, pidFile)
	for _, pid := range pids {
		require.False(t, gone(pid))
	}
	require.NoError(t, b.Close())
	for _, pid := range pids {
		eventually(t, func() bool { return gone(pid) }, "a child that left the upstream's process group outlived Close")
	}
}

func TestBridge_crash_killsEscapedChildren(t *testing.T) {
	u, pidFile := escaping(t)
	v := connect(t, u, api.ModeNative, executor.NewConfig())
	pids := readPids(t, pidFile)
	r := v.call(context.Background(), "up.crash", `{}`)
	require.NotNil(t, r.Err)
	for _, pid := range pids {
		eventually(t, func() bool { return gone(pid) }, "a child that left the crashed upstream's process group is still running")
	}
}
