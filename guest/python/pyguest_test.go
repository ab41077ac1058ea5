package python

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tetratelabs/wazero"
)

// The build outputs (build.sh), relative to this package's directory, where
// `go test` runs, and where the guest sees the zip's directory.
const (
	wasmFile = "wasm/python.wasm"
	libDir   = "wasm/lib"
	zipFile  = "wasm/lib/python313.zip"
	guestLib = "/usr/local/lib"
)

// requireBuilt returns python.wasm, or skips the test when it (or the zip)
// is not built, unless CI is set: in CI a missing Python guest fails.
func requireBuilt(tb testing.TB) []byte {
	tb.Helper()
	b, err := readBuilt()
	checkBuilt(tb, err, os.Getenv)
	return b
}

func readBuilt() ([]byte, error) {
	b, err := os.ReadFile(wasmFile)
	if err == nil {
		_, err = os.Stat(zipFile)
	}
	return b, err
}

func checkBuilt(tb testing.TB, err error, getenv func(string) string) {
	tb.Helper()
	if err == nil {
		return
	}
	if ci, perr := strconv.ParseBool(getenv("CI")); perr == nil && ci {
		tb.Fatalf("the Python guest is required in CI and missing (make guest-python): %v", err)
		return
	}
	tb.Skipf("skipped: the Python guest is not built (make guest-python): %v", err)
}

// recorder is a testing.TB that records whether the check skipped or failed.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()                        {}
func (r *recorder) Skipf(string, ...any)           { r.skipped = true }
func (r *recorder) Fatalf(string, ...any)          { r.failed = true }
func (r *recorder) Errorf(format string, a ...any) { r.failed = true }

func TestCheckBuilt(t *testing.T) {
	missing := errors.New("open wasm/python.wasm: no such file or directory")
	for _, c := range []struct {
		name string
		err  error
		ci   string
		want string
	}{
		{"present", nil, "true", ""},
		{"present, no CI", nil, "", ""},
		{"missing, no CI", missing, "", "skip"},
		{"missing, CI=false", missing, "false", "skip"},
		{"missing, CI=garbage", missing, "yes please", "skip"},
		{"missing, CI=true", missing, "true", "fail"},
		{"missing, CI=1", missing, "1", "fail"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{TB: t}
			checkBuilt(r, c.err, func(k string) string {
				if k == "CI" {
					return c.ci
				}
				return ""
			})
			got := ""
			switch {
			case r.failed:
				got = "fail"
			case r.skipped:
				got = "skip"
			}
			if got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestMkzip_storedPyc(t *testing.T) {
	requireBuilt(t)
	b, err := os.ReadFile(filepath.Clean(zipFile))
	if err != nil {
		t.Fatal(err)
	}
	// A stored zip's local headers say method 0; a deflated one says 8.
	if i := bytes.Index(b, []byte("PK\x03\x04")); i < 0 || b[i+8] != 0 || b[i+9] != 0 {
		t.Fatalf("the stdlib zip is not stored")
	}
}

// Benchmarks: compile (cold and from wazero's compilation cache),
// instantiate + init, and a run of 1 + 1 on a live instance.

func BenchmarkCompile(b *testing.B) {
	wasm := requireBuilt(b)
	ctx := context.Background()
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
			if _, err := rt.CompileModule(ctx, wasm); err != nil {
				b.Fatal(err)
			}
			rt.Close(ctx)
		}
	})
	b.Run("cached", func(b *testing.B) {
		cache, err := wazero.NewCompilationCacheWithDir(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		compile := func() {
			rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCompilationCache(cache))
			if _, err := rt.CompileModule(ctx, wasm); err != nil {
				b.Fatal(err)
			}
			rt.Close(ctx)
		}
		compile() // fills the cache
		for b.Loop() {
			compile()
		}
	})
}
