package wasmtime

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
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

var wasiFuncs = []func(*wasmtimeState, engine.Memory, []uint64){
	wasiClockTimeGet, wasiFdClose, wasiFdFdstatGet, wasiFdSeek, wasiFdWrite, wasiRandomGet,
}

// FuzzWasmtimeWASI calls the WASI functions the guest imports on wasmtime
// with arbitrary arguments and memory: each returns an errno of WASI's and
// never panics, whatever the pointers and lengths (they come from the
// guest).
func FuzzWasmtimeWASI(f *testing.F) {
	f.Add(uint8(0), uint64(0), uint64(1000), uint64(0), uint64(8), []byte{})
	f.Add(uint8(4), uint64(1), uint64(0), uint64(2), uint64(16), []byte{8, 0, 0, 0, 5, 0, 0, 0, 16, 0, 0, 0, 3, 0, 0, 0})
	f.Add(uint8(4), uint64(1), uint64(0), uint64(0x40000000), uint64(16), []byte{})
	f.Add(uint8(5), uint64(0xfffffff0), uint64(0x20), uint64(0), uint64(0), []byte{})
	f.Add(uint8(2), uint64(3), uint64(0), uint64(0), uint64(0), []byte{})
	f.Fuzz(func(t *testing.T, which uint8, a, b, c, d uint64, memory []byte) {
		mem := make(sliceMemory, abi.PageSize)
		copy(mem, memory)
		st := &wasmtimeState{world: world.New(world.Spec{Deterministic: true})}
		stack := []uint64{a, b, c, d}
		wasiFuncs[int(which)%len(wasiFuncs)](st, mem, stack)
		require.Contains(t, []uint64{wasiSuccess, wasiBadf, wasiFault, wasiInval, wasiSpipe}, stack[0])
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
