package wasmtime

import (
	"encoding/binary"
	"slices"
	"testing"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/wasifs"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// sliceMemory is a engine.Memory over a byte slice, for the WASI functions.
type sliceMemory []byte

func (m sliceMemory) Size() uint32 { return uint32(len(m)) }

func (m sliceMemory) Read(offset, n uint32) ([]byte, bool) {
	if uint64(offset)+uint64(n) > uint64(len(m)) {
		return nil, false
	}
	return m[offset : offset+n], true
}

func (m sliceMemory) Write(offset uint32, v []byte) bool {
	if uint64(offset)+uint64(len(v)) > uint64(len(m)) {
		return false
	}
	copy(m[offset:], v)
	return true
}

func (m sliceMemory) ReadUint32Le(offset uint32) (uint32, bool) {
	b, ok := m.Read(offset, 4)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b), true
}

func (m sliceMemory) Grow(uint32) (uint32, bool) { return 0, false }

// FuzzWasmtimeWASI calls the WASI functions the guests import on wasmtime
// (all but proc_exit, which exits), with a file system or without, with
// arbitrary arguments and memory: each returns an errno of WASI's and
// never panics, whatever the pointers and lengths (they come from the
// guest).
func FuzzWasmtimeWASI(f *testing.F) {
	funcs, err := wasiFuncs()
	require.NoError(f, err)
	funcs = slices.DeleteFunc(funcs, func(w wasiFunc) bool { return w.name == "proc_exit" })
	index := func(name string) uint8 {
		return uint8(slices.IndexFunc(funcs, func(w wasiFunc) bool { return w.name == name }))
	}
	args := func(v ...uint64) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint64(b, x)
		}
		return b
	}
	f.Add(index("clock_time_get"), false, args(0, 1000, 8), []byte{})
	f.Add(index("fd_write"), false, args(1, 0, 2, 16), []byte{8, 0, 0, 0, 5, 0, 0, 0, 16, 0, 0, 0, 3, 0, 0, 0})
	f.Add(index("fd_write"), true, args(1, 0, 0x40000000, 16), []byte{})
	f.Add(index("random_get"), false, args(0xfffffff0, 0x20), []byte{})
	f.Add(index("fd_seek"), true, args(3, 0, 0, 0), []byte{})
	f.Add(index("poll_oneoff"), false, args(0, 256, 1, 512), []byte{})
	f.Add(index("poll_oneoff"), false, args(0, 256, 0x0555_5556, 512), []byte{})
	f.Add(index("path_open"), true, args(3, 0, 64, 13, 0, 2, 0, 0, 128), append(make([]byte, 64), "python313.zip"...))
	f.Add(index("environ_sizes_get"), false, args(abi.PageSize-2, 0), []byte{})
	f.Fuzz(func(t *testing.T, which uint8, withFS bool, argBytes, memory []byte) {
		w := funcs[int(which)%len(funcs)]
		mem := make(sliceMemory, abi.PageSize)
		copy(mem, memory)
		st := &wasmtimeState{world: world.New(world.Spec{Deterministic: true})}
		if withFS {
			st.files = wasifs.New(testFS, testMount)
			defer st.files.Reset()
		}
		stack := make([]uint64, max(len(w.params), 1))
		for i := range stack {
			var b [8]byte
			if len(argBytes) > 8*i {
				copy(b[:], argBytes[8*i:])
			}
			stack[i] = binary.LittleEndian.Uint64(b[:])
			if i < len(w.params) && w.params[i] == wasmtime.KindI32 {
				stack[i] = uint64(uint32(stack[i]))
			}
		}
		w.fn(st, mem, stack)
		require.LessOrEqual(t, stack[0], uint64(76), "%s returned %d, not one of WASI's errno", w.name, stack[0])
	})
}

func TestWasiFdWrite_countsTheBytes(t *testing.T) {
	tests := []struct {
		name      string
		fd        uint64
		iovs      []uint32 // ptr, len pairs
		wantErrno uint64
		wantN     uint32
	}{
		{"stdout", 1, []uint32{100, 5, 200, 7}, wasiSuccess, 12},
		{"stderr, no vectors", 2, nil, wasiSuccess, 0},
		{"stdin is not writable", 0, []uint32{100, 5}, wasiBadf, 0},
		{"no file is open", 3, []uint32{100, 5}, wasiBadf, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := make(sliceMemory, abi.PageSize)
			for i, v := range tt.iovs {
				binary.LittleEndian.PutUint32(mem[16+4*i:], v)
			}
			stack := []uint64{tt.fd, 16, uint64(len(tt.iovs) / 2), 8}
			wasiFdWrite(nil, mem, stack)
			require.Equal(t, tt.wantErrno, stack[0])
			n, _ := mem.ReadUint32Le(8)
			require.Equal(t, tt.wantN, n)
		})
	}
}

func TestWasiClockTimeGet_theWorldsClocks(t *testing.T) {
	st := &wasmtimeState{world: world.New(world.Spec{Deterministic: true, Epoch: 5e9})}
	mem := make(sliceMemory, abi.PageSize)
	for _, tt := range []struct {
		name      string
		id        uint64
		wantErrno uint64
		want      uint64
	}{
		{"realtime", 0, wasiSuccess, 5e9},
		{"monotonic", 1, wasiSuccess, 0},
		{"process CPU time is not offered", 2, wasiInval, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			binary.LittleEndian.PutUint64(mem[64:], 0)
			stack := []uint64{tt.id, 1, 64, 0}
			wasiClockTimeGet(st, mem, stack)
			require.Equal(t, tt.wantErrno, stack[0])
			require.Equal(t, tt.want, binary.LittleEndian.Uint64(mem[64:]))
		})
	}
	stack := []uint64{0, 1, abi.PageSize - 4, 0}
	wasiClockTimeGet(st, mem, stack)
	require.Equal(t, uint64(wasiFault), stack[0], "a result past the memory's end")
}
