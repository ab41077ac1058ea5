package wasmtime

import (
	"encoding/binary"
	"fmt"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/ptcx/ptcx/wasmhost/internal/engine"
)

// The WASI functions the Python guest imports beside its file functions
// (wasifs.Funcs) and the QuickJS guest's six (imports.go), as wazero's
// behave with the configuration the wazero engine gives an instance: no
// environment; the clocks' resolutions wazero's (realtime 1 µs, monotonic
// 1 ns); no sockets. Two differ from wazero's: poll_oneoff, which wazero
// implements as a sleep on the clock, is ENOSYS here (time.sleep fails:
// no program needs it, a run's timers are the host's), and proc_exit
// stops the guest with an error (a trap of the run) where wazero closes
// the module (which fails the run too).

const (
	wasiNosys = 52
	wasiNosup = 58
)

func (c *wasmtimeCore) definePythonWASI() error {
	i32 := wasmtime.KindI32
	ints := func(n int) []wasmtime.ValKind {
		k := make([]wasmtime.ValKind, n)
		for i := range k {
			k[i] = i32
		}
		return k
	}
	errno := func(e uint64) func(*wasmtimeState, engine.Memory, []uint64) {
		return func(_ *wasmtimeState, _ engine.Memory, stack []uint64) { stack[0] = e }
	}
	for _, w := range []struct {
		name            string
		params, results int
		fn              func(st *wasmtimeState, mem engine.Memory, stack []uint64)
	}{
		{"clock_res_get", 2, 1, wasiClockResGet},
		{"environ_get", 2, 1, errno(wasiSuccess)},
		{"environ_sizes_get", 2, 1, wasiEnvironSizesGet},
		{"poll_oneoff", 4, 1, errno(wasiNosys)},
		{"proc_exit", 1, 0, wasiProcExit},
		{"sched_yield", 0, 1, errno(wasiSuccess)},
		{"sock_accept", 3, 1, errno(wasiNosup)},
		{"sock_recv", 6, 1, errno(wasiNosup)},
		{"sock_send", 5, 1, errno(wasiNosup)},
		{"sock_shutdown", 2, 1, errno(wasiNosup)},
	} {
		if err := c.define(wasiModule, w.name, ints(w.params), ints(w.results), w.fn); err != nil {
			return err
		}
	}
	return nil
}

// clock_res_get(id, result_ptr) -> errno
func wasiClockResGet(_ *wasmtimeState, mem engine.Memory, stack []uint64) {
	var res uint64
	switch uint32(stack[0]) {
	case 0:
		res = 1000
	case 1:
		res = 1
	default:
		stack[0] = wasiInval
		return
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], res)
	stack[0] = errnoOf(mem.Write(uint32(stack[1]), b[:]))
}

// environ_sizes_get(count_ptr, buf_size_ptr) -> errno: no environment.
func wasiEnvironSizesGet(_ *wasmtimeState, mem engine.Memory, stack []uint64) {
	var b [4]byte
	stack[0] = errnoOf(mem.Write(uint32(stack[0]), b[:]) && mem.Write(uint32(stack[1]), b[:]))
}

// proc_exit(code): the guest ends; the call into it fails (wasmtimeCall).
func wasiProcExit(_ *wasmtimeState, _ engine.Memory, stack []uint64) {
	panic(fmt.Errorf("wasmhost: the guest exited (WASI proc_exit, code %d)", uint32(stack[0])))
}
