package wasmhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"

	"github.com/ptcx/ptcx/api"

	"github.com/ptcx/ptcx/guest"
	"github.com/ptcx/ptcx/wasmhost"
)

// moduleExporting is a tiny wasm module importing ptcx.poll (which the host
// needs to meter it) and exporting one function name that returns the i32
// constant v (0 to 63: one byte of signed LEB128).
func moduleExporting(name string, v byte) []byte {
	b := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	b = append(b, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f)                                         // type: () -> i32
	b = append(b, 0x02, 0x0d, 0x01, 0x04, 'p', 't', 'c', 'x', 0x04, 'p', 'o', 'l', 'l', 0x00, 0x00) // import ptcx.poll, type 0
	b = append(b, 0x03, 0x02, 0x01, 0x00)                                                           // one function of type 0
	b = append(b, 0x07, byte(len(name)+4), 0x01, byte(len(name)))
	b = append(b, name...)
	b = append(b, 0x00, 0x01)                                  // export function 1 (0 is the import)
	b = append(b, 0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, v, 0x0b) // body: i32.const v
	return b
}

func TestNew_guestChecks(t *testing.T) {
	tests := []struct {
		name  string
		guest []byte
		want  string
	}{
		{"another ABI version", moduleExporting("ptcx_abi_version", 42),
			"the guest speaks ABI version 42, this host version 3: rebuild the guest (make guest)"},
		{"not a ptcx guest", moduleExporting("something_else", 1), "the guest has no ptcx_abi_version export: it is not a ptcx guest"},
		{"no poll import", []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00},
			"wasmhost: the guest cannot be metered: meter: the module does not import function ptcx.poll"},
		{"not wasm", []byte("not wasm"), "wasmhost: the guest cannot be metered: meter: malformed module at offset 0: not a wasm binary module"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := wasmhost.New(context.Background(), wasmhost.NewConfig().WithCompilationCacheDir("").WithGuest(tt.guest))
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// The guest may import only these: the ptcx ABI, the clock and random
// source, and the stdio functions QuickJS's debugging code links in (the
// guest has no open files: no preopens, and standard streams that discard).
var allowedImports = []string{
	"ptcx.call", "ptcx.error", "ptcx.log", "ptcx.poll", "ptcx.result", "ptcx.timer_clear", "ptcx.timer_set",
	"wasi_snapshot_preview1.clock_time_get", "wasi_snapshot_preview1.fd_close",
	"wasi_snapshot_preview1.fd_fdstat_get", "wasi_snapshot_preview1.fd_seek",
	"wasi_snapshot_preview1.fd_write", "wasi_snapshot_preview1.random_get",
}

func TestGuest_importsOnlyWhatItNeeds(t *testing.T) {
	ctx := context.Background()
	// The interpreter only validates the module: much faster than compiling.
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	m, err := r.CompileModule(ctx, guest.Wasm())
	require.NoError(t, err)
	var imports []string
	for _, f := range m.ImportedFunctions() {
		module, name, _ := f.Import()
		imports = append(imports, module+"."+name)
	}
	sort.Strings(imports)
	require.Subset(t, allowedImports, imports)
	require.Subset(t, imports, allowedImports[:7], "the ptcx ABI imports are all used")
	require.Empty(t, m.ImportedMemories())
}

func TestRuntime_Close(t *testing.T) {
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, testConfig())
	require.NoError(t, err)
	requireHealthy(t, rt)
	require.NoError(t, rt.Close(ctx))
	require.NoError(t, rt.Close(ctx), "a second Close")
	_, err = rt.Run(ctx, wasmhost.Program{JS: `return 1`}, &tools{})
	require.ErrorIs(t, err, wasmhost.ErrClosed)
}

func TestRuntime_Close_duringRuns(t *testing.T) {
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, testConfig())
	require.NoError(t, err)
	programs := []string{`await tools.hang()`, `for (;;) {}`}
	errs := make(chan error, len(programs))
	started := make(chan struct{}, len(programs))
	d := wasmhost.DispatcherFunc(func(name string, _ json.RawMessage, done func(wasmhost.CallResult)) {
		if name == "started" {
			started <- struct{}{}
			done(wasmhost.CallResult{OK: true})
		}
	})
	for _, js := range programs {
		go func() {
			_, err := rt.Run(ctx, wasmhost.Program{JS: `await tools.started(); ` + js, Tools: []string{"started", "hang"}}, d)
			errs <- err
		}()
	}
	for range programs {
		<-started
	}
	require.NoError(t, rt.Close(ctx))
	for range programs {
		err := <-errs
		var re *wasmhost.RunError
		require.True(t, errors.As(err, &re), "%v", err)
		require.Equal(t, api.KindAbort, re.Kind, re.Message)
		require.ErrorIs(t, err, wasmhost.ErrClosed)
	}
}

func TestConfig_WithCompilationCacheDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	rt := newRuntime(t, wasmhost.NewConfig().WithCompilationCacheDir(dir))
	requireHealthy(t, rt)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, entries, "nothing was cached")

	requireHealthy(t, newRuntime(t, wasmhost.NewConfig().WithCompilationCacheDir("")))
}

func TestDefaultCacheDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "xdg"))
	require.Equal(t, filepath.Join(home, "xdg", "ptcx", "wazero"), wasmhost.DefaultCacheDir())
}
