package client_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// goCommand is the go command of the toolchain running the test.
func goCommand(t *testing.T) string {
	t.Helper()
	path := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(path); err != nil {
		path, err = exec.LookPath("go")
		require.NoError(t, err, "the go command is needed to build the client binary")
	}
	return path
}

// TestClient_linksNoServer builds a small client program
// (testdata/thinclient: Run with a client-side tool) and reads its module
// list: a client links the wire (serve/protocol), api and the standard
// library, and none of the server — no sandbox engine, no NATS, no
// Prometheus, no esbuild.
func TestClient_linksNoServer(t *testing.T) {
	gobin := goCommand(t)
	bin := filepath.Join(t.TempDir(), "thinclient")
	build := exec.Command(gobin, "build", "-o", bin, "./testdata/thinclient")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	out, err = exec.Command(gobin, "version", "-m", bin).CombinedOutput()
	require.NoError(t, err, "go version -m: %s", out)
	var deps []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "dep" {
			deps = append(deps, f[1])
		}
	}
	for _, banned := range []string{"github.com/tetratelabs/wazero", "github.com/bytecodealliance/wasmtime-go", "github.com/nats-io/nats.go", "github.com/prometheus/client_golang", "github.com/evanw/esbuild"} {
		for _, d := range deps {
			require.False(t, strings.HasPrefix(d, banned), "the client binary links %s:\n%s", d, out)
		}
	}
	require.Empty(t, deps, "the client binary links modules beyond ptcx's own:\n%s", out)

	// Of the module's own packages, only these three and the program.
	out, err = exec.Command(gobin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./testdata/thinclient").CombinedOutput()
	require.NoError(t, err, "go list -deps: %s", out)
	pkgs := strings.Fields(string(out))
	sort.Strings(pkgs)
	require.Equal(t, []string{
		"github.com/ptcx/ptcx/api",
		"github.com/ptcx/ptcx/serve/client",
		"github.com/ptcx/ptcx/serve/client/testdata/thinclient",
		"github.com/ptcx/ptcx/serve/protocol",
	}, pkgs)

	fi, err := os.Stat(bin)
	require.NoError(t, err)
	t.Logf("the client binary is %.1f MB (it was 16.8 MB when serve/client imported serve)", float64(fi.Size())/1e6)
	require.Less(t, fi.Size(), int64(12<<20), "the client binary grew past 12 MiB: what does it link now?")
}
