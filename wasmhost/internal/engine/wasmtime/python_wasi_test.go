package wasmtime

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPythonWASI(t *testing.T) {
	mem := make(sliceMemory, 64)
	st := &wasmtimeState{}
	stack := []uint64{1, 8}
	wasiClockResGet(st, mem, stack)
	require.Equal(t, uint64(wasiSuccess), stack[0])
	require.Equal(t, uint64(1), binary.LittleEndian.Uint64(mem[8:]), "monotonic: 1 ns")
	stack = []uint64{0, 8}
	wasiClockResGet(st, mem, stack)
	require.Equal(t, uint64(1000), binary.LittleEndian.Uint64(mem[8:]), "realtime: 1 µs")
	stack = []uint64{2, 8}
	wasiClockResGet(st, mem, stack)
	require.Equal(t, uint64(wasiInval), stack[0], "no CPU-time clocks")
	stack = []uint64{0, 60}
	wasiClockResGet(st, mem, stack)
	require.Equal(t, uint64(wasiFault), stack[0])

	mem[0], mem[4] = 9, 9
	stack = []uint64{0, 4}
	wasiEnvironSizesGet(st, mem, stack)
	require.Equal(t, uint64(wasiSuccess), stack[0])
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 0}, []byte(mem[:8]), "no environment")
	stack = []uint64{0, 62}
	wasiEnvironSizesGet(st, mem, stack)
	require.Equal(t, uint64(wasiFault), stack[0])

	require.PanicsWithError(t, "wasmhost: the guest exited (WASI proc_exit, code 3)", func() {
		wasiProcExit(st, mem, []uint64{3})
	}, "an import's panic traps the guest (ptcxWasmtimeImport) and fails the call (wasmtimeCall)")
}
