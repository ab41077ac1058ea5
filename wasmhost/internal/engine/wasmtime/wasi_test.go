package wasmtime

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero/sys"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/wasifs"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// testFS is the file system of the tests' instances that have one, at
// testMount.
var testFS = fstest.MapFS{
	"python313.zip":  {Data: []byte("PK\x05\x06 a zip")},
	"dir/module.pyc": {Data: []byte("bytecode")},
}

const testMount = "/usr/local/lib"

// wasiCallModule imports the WASI function name, of the parameters given
// (wasm value types: 0x7f i32, 0x7e i64) and an i32 result unless
// noResult, and exports it as f, with a memory of one page.
func wasiCallModule(name string, params []byte, noResult bool) []byte {
	sec := func(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }
	str := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	m := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	ty := append([]byte{1, 0x60, byte(len(params))}, params...)
	if noResult {
		ty = append(ty, 0)
	} else {
		ty = append(ty, 1, 0x7f)
	}
	m = append(m, sec(1, ty...)...)
	imp := append(append([]byte{1}, str(wasiModule)...), str(name)...)
	m = append(m, sec(2, append(imp, 0x00, 0)...)...)
	m = append(m, sec(3, 1, 0)...)
	m = append(m, sec(5, 1, 0x00, 1)...)
	exports := append(append([]byte{2}, str("f")...), 0x00, 1)
	exports = append(append(exports, str("memory")...), 0x02, 0)
	m = append(m, sec(7, exports...)...)
	body := []byte{0x00}
	for i := range byte(len(params)) {
		body = append(body, 0x20, i) // local.get i
	}
	body = append(body, 0x10, 0, 0x0b) // call 0
	return append(m, sec(10, append([]byte{1, byte(len(body))}, body...)...)...)
}

// newWasiTestInstance instantiates m on an engine with testFS (withFS) or
// without a file system.
func newWasiTestInstance(t *testing.T, bin []byte, withFS bool) *wasmtimeInstance {
	t.Helper()
	ctx := context.Background()
	factory := New
	if withFS {
		factory = NewFS(testFS, testMount)
	}
	e, err := factory(ctx, 1<<20, "", nil)
	require.NoError(t, err)
	m, err := e.Compile(ctx, bin)
	require.NoError(t, err)
	inst, err := e.Instantiate(ctx, m, nil, world.New(world.Spec{Deterministic: true}), false)
	require.NoError(t, err)
	i := inst.(*wasmtimeInstance)
	t.Cleanup(func() { i.Close(ctx) })
	return i
}

// The file functions are wasifs's on an instance with a file system, and
// EBADF past the standard streams on one without: fd_prestat_get(3) finds
// the preopen only on the first.
func TestWasmtimeFiles_preopenWithAFileSystemOnly(t *testing.T) {
	bin := wasiCallModule("fd_prestat_get", []byte{0x7f, 0x7f}, false)
	for _, tt := range []struct {
		name      string
		withFS    bool
		wantErrno uint64
		wantLen   uint32
	}{
		{"with a file system", true, wasiSuccess, uint32(len(testMount))},
		{"without", false, wasiBadf, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			i := newWasiTestInstance(t, bin, tt.withFS)
			stack := []uint64{wasifs.Preopen, 64}
			require.NoError(t, i.Function("f").CallWithStack(context.Background(), stack))
			require.Equal(t, tt.wantErrno, stack[0])
			n, ok := i.Memory().ReadUint32Le(68)
			require.True(t, ok)
			require.Equal(t, tt.wantLen, n)
		})
	}
}

// path_open, nine parameters, opens a file of the table through the
// trampoline; the instance's files are what a snapshot carries, reset
// and restored as engine.FileTable says.
func TestWasmtimeInstance_FileTable(t *testing.T) {
	const i32, i64 = 0x7f, 0x7e
	i := newWasiTestInstance(t, wasiCallModule("path_open", []byte{i32, i32, i32, i32, i32, i64, i64, i32, i32}, false), true)
	require.True(t, i.Memory().Write(64, []byte("python313.zip")))
	// Through wasmtime-go: rawFunc calls exports of at most 4 parameters.
	errno, err := i.inst.GetFunc(i.store, "f").Call(i.store, int32(wasifs.Preopen), int32(0), int32(64), int32(13), int32(0),
		int64(2) /* fd_read */, int64(0), int32(0), int32(128))
	require.NoError(t, err)
	require.Equal(t, int32(wasiSuccess), errno)
	fd, _ := i.Memory().ReadUint32Le(128)
	require.Equal(t, []wasifs.File{{FD: fd, Path: "python313.zip"}}, i.Files())

	i.ResetFiles()
	require.Empty(t, i.Files())
	files := []wasifs.File{{FD: 9, Path: "dir/module.pyc", Offset: 3}}
	require.NoError(t, i.RestoreFiles(files))
	require.Equal(t, files, i.Files())
	require.Error(t, i.RestoreFiles([]wasifs.File{{FD: 9, Path: "missing"}}))
	require.Empty(t, i.Files(), "a failed restore leaves the table empty")

	plain := newWasiTestInstance(t, wasiCallModule("fd_close", []byte{i32}, false), false)
	require.Nil(t, plain.Files())
	require.NoError(t, plain.RestoreFiles(nil))
	require.ErrorContains(t, plain.RestoreFiles(files), "no file system")
}

// proc_exit ends the run as on wazero: the call returns a *sys.ExitError
// of the code, and so does every later call.
func TestWasmtimeImport_procExit(t *testing.T) {
	i := newWasiTestInstance(t, wasiCallModule("proc_exit", []byte{0x7f}, true), false)
	for range 2 {
		err := i.Function("f").CallWithStack(context.Background(), []uint64{3})
		var exit *sys.ExitError
		require.True(t, errors.As(err, &exit), "got %v", err)
		require.Equal(t, uint32(3), exit.ExitCode())
	}
}

func TestWasiPollOneoff_everySubscriptionAtOnce(t *testing.T) {
	sub := func(userdata uint64, kind byte, fd uint32, flags uint16) []byte {
		b := make([]byte, 48)
		binary.LittleEndian.PutUint64(b, userdata)
		b[8] = kind
		binary.LittleEndian.PutUint32(b[16:], fd) // a clock's id; an fd's descriptor
		binary.LittleEndian.PutUint64(b[24:], 1e9)
		binary.LittleEndian.PutUint16(b[40:], flags)
		return b
	}
	type event struct {
		userdata uint64
		errno    uint16
		kind     byte
	}
	for _, tt := range []struct {
		name      string
		subs      [][]byte
		wantErrno uint64
		want      []event
	}{
		{"a relative clock", [][]byte{sub(7, 0, 1, 0)}, wasiSuccess, []event{{7, 0, 0}}},
		{"standard input is ready, a file is not open", [][]byte{sub(1, 1, 0, 0), sub(2, 1, 5, 0), sub(3, 2, 1, 0)},
			wasiSuccess, []event{{1, 0, 1}, {2, wasiBadf, 1}, {3, wasiNotsup, 2}}},
		{"an absolute clock", [][]byte{sub(1, 0, 1, 1)}, wasiNotsup, nil},
		{"an unknown flag", [][]byte{sub(1, 0, 1, 2)}, wasiInval, nil},
		{"an unknown kind", [][]byte{sub(1, 3, 1, 0)}, wasiInval, nil},
		{"a negative descriptor", [][]byte{sub(1, 1, 0xffff_ffff, 0)}, wasiBadf, nil},
		{"no subscription", nil, wasiInval, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem := make(sliceMemory, abi.PageSize)
			var in []byte
			for _, s := range tt.subs {
				in = append(in, s...)
			}
			copy(mem[1024:], in)
			stack := []uint64{1024, 2048, uint64(len(tt.subs)), 16}
			wasiPollOneoff(nil, mem, stack)
			require.Equal(t, tt.wantErrno, stack[0])
			if tt.want == nil {
				return
			}
			n, _ := mem.ReadUint32Le(16)
			require.Equal(t, uint32(len(tt.want)), n)
			for k, w := range tt.want {
				ev := mem[2048+32*k:]
				require.Equal(t, w, event{binary.LittleEndian.Uint64(ev), binary.LittleEndian.Uint16(ev[8:]), ev[10]}, "event %d", k)
			}
		})
	}
	stack := []uint64{abi.PageSize - 40, 0, 1, 16}
	wasiPollOneoff(nil, make(sliceMemory, abi.PageSize), stack)
	require.Equal(t, uint64(wasiFault), stack[0], "subscriptions past the memory's end")
}

func TestWasiEnviron_empty(t *testing.T) {
	mem := make(sliceMemory, abi.PageSize)
	binary.LittleEndian.PutUint32(mem[8:], 99)
	binary.LittleEndian.PutUint32(mem[12:], 99)
	stack := []uint64{8, 12}
	wasiEnvironSizesGet(nil, mem, stack)
	require.Equal(t, uint64(wasiSuccess), stack[0])
	require.Equal(t, uint32(0), binary.LittleEndian.Uint32(mem[8:]))
	require.Equal(t, uint32(0), binary.LittleEndian.Uint32(mem[12:]))
	stack = []uint64{8, abi.PageSize - 2}
	wasiEnvironSizesGet(nil, mem, stack)
	require.Equal(t, uint64(wasiFault), stack[0])
}

func TestWasiClockResGet(t *testing.T) {
	mem := make(sliceMemory, abi.PageSize)
	for _, tt := range []struct {
		id, wantErrno, want uint64
	}{{0, wasiSuccess, 1000}, {1, wasiSuccess, 1}, {2, wasiInval, 0}} {
		binary.LittleEndian.PutUint64(mem[64:], 0)
		stack := []uint64{tt.id, 64}
		wasiClockResGet(nil, mem, stack)
		require.Equal(t, tt.wantErrno, stack[0], "clock %d", tt.id)
		require.Equal(t, tt.want, binary.LittleEndian.Uint64(mem[64:]), "clock %d", tt.id)
	}
}
