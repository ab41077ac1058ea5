package wasmtime

import (
	"encoding/binary"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/tetratelabs/wazero/sys"

	"github.com/ptcx/ptcx/wasmhost/internal/engine"
)

// The WASI functions (wasi_snapshot_preview1) the guests import on
// wasmtime, but for the file functions (wasi_files.go): every one the
// Python guest imports (guest/python/imports_test.go), of which the
// QuickJS guest imports clock_time_get and random_get. Each behaves as
// wazero's does with the configuration of engine.moduleConfig: no
// arguments or environment; the clocks and the random source are the
// instance's world; nothing sleeps or yields; no sockets.

// WASI errno values (wasi_snapshot_preview1).
const (
	wasiSuccess = 0
	wasiBadf    = 8
	wasiFault   = 21
	wasiInval   = 28
	wasiNotsup  = 58
	wasiSpipe   = 70
)

const wasiModule = "wasi_snapshot_preview1"

// wasiFunc is one WASI function: its parameters (i32 and i64), one i32
// result (its errno) unless noResult, and what it does.
type wasiFunc struct {
	name     string
	params   []wasmtime.ValKind
	noResult bool
	fn       func(st *wasmtimeState, mem engine.Memory, stack []uint64)
}

// wasiFuncs are the WASI functions the engine defines: these and the file
// functions.
func wasiFuncs() ([]wasiFunc, error) {
	i32, i64 := wasmtime.KindI32, wasmtime.KindI64
	files, err := wasiFileFuncs()
	if err != nil {
		return nil, err
	}
	return append([]wasiFunc{
		{name: "clock_res_get", params: []wasmtime.ValKind{i32, i32}, fn: wasiClockResGet},
		{name: "clock_time_get", params: []wasmtime.ValKind{i32, i64, i32}, fn: wasiClockTimeGet},
		{name: "environ_get", params: []wasmtime.ValKind{i32, i32}, fn: wasiEnvironGet},
		{name: "environ_sizes_get", params: []wasmtime.ValKind{i32, i32}, fn: wasiEnvironSizesGet},
		{name: "poll_oneoff", params: []wasmtime.ValKind{i32, i32, i32, i32}, fn: wasiPollOneoff},
		{name: "proc_exit", params: []wasmtime.ValKind{i32}, noResult: true, fn: wasiProcExit},
		{name: "random_get", params: []wasmtime.ValKind{i32, i32}, fn: wasiRandomGet},
		{name: "sched_yield", fn: wasiSchedYield},
		{name: "sock_accept", params: []wasmtime.ValKind{i32, i32, i32}, fn: wasiSock},
		{name: "sock_recv", params: []wasmtime.ValKind{i32, i32, i32, i32, i32, i32}, fn: wasiSock},
		{name: "sock_send", params: []wasmtime.ValKind{i32, i32, i32, i32, i32}, fn: wasiSock},
		{name: "sock_shutdown", params: []wasmtime.ValKind{i32, i32}, fn: wasiSock},
	}, files...), nil
}

// clock_res_get(id, result_ptr) -> errno: the resolutions engine's
// moduleConfig gives wazero, 1 µs for the realtime clock, 1 ns for the
// monotonic one.
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

// clock_time_get(id, precision, result_ptr) -> errno: the realtime (0) and
// monotonic (1) clocks, in ns; the CPU-time clocks are not offered.
func wasiClockTimeGet(st *wasmtimeState, mem engine.Memory, stack []uint64) {
	var t int64
	switch uint32(stack[0]) {
	case 0:
		sec, nsec := st.world.Walltime()
		t = sec*1e9 + int64(nsec)
	case 1:
		t = st.world.Nanotime()
	default:
		stack[0] = wasiInval
		return
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(t))
	stack[0] = errnoOf(mem.Write(uint32(stack[2]), b[:]))
}

// environ_get(environ, environ_buf) -> errno: the environment is empty,
// nothing is written.
func wasiEnvironGet(_ *wasmtimeState, _ engine.Memory, stack []uint64) {
	stack[0] = wasiSuccess
}

// environ_sizes_get(result_count, result_buf_size) -> errno: 0 and 0.
func wasiEnvironSizesGet(_ *wasmtimeState, mem engine.Memory, stack []uint64) {
	var zero [4]byte
	ok := mem.Write(uint32(stack[0]), zero[:])
	ok = ok && mem.Write(uint32(stack[1]), zero[:])
	stack[0] = errnoOf(ok)
}

// poll_oneoff(in, out, nsubscriptions, result_nevents) -> errno, as
// wazero's with nothing to wait for: nothing sleeps (wazero's default
// nanosleep returns at once; timers are the host's), so every subscription
// is an event at once: a clock's (a relative timeout; an absolute one is
// ENOTSUP, other flags EINVAL, for the whole call); a read of a standard
// stream's, ready (standard input is at its end); a write of one's,
// ENOTSUP; and, for any other descriptor, EBADF (wazero's own descriptors
// are the standard streams: the file system's are the table's).
func wasiPollOneoff(_ *wasmtimeState, mem engine.Memory, stack []uint64) {
	in, out, n, result := uint32(stack[0]), uint32(stack[1]), uint32(stack[2]), uint32(stack[3])
	stack[0] = pollOneoff(mem, in, out, n, result)
}

func pollOneoff(mem engine.Memory, in, out, n, result uint32) uint64 {
	const subSize, eventSize = 48, 32
	if n == 0 {
		return wasiInval
	}
	if uint64(n)*subSize > uint64(mem.Size()) {
		return wasiFault
	}
	subs, ok := mem.Read(in, n*subSize)
	if !ok {
		return wasiFault
	}
	events, ok := mem.Read(out, n*eventSize)
	if !ok {
		return wasiFault
	}
	subs = append([]byte(nil), subs...) // in and out may overlap
	clear(events)
	for i := range n {
		sub, ev := subs[i*subSize:(i+1)*subSize], events[i*eventSize:(i+1)*eventSize]
		kind, errno := sub[8], uint16(wasiSuccess)
		switch kind {
		case 0: // clock: flags at 8+8+24
			switch binary.LittleEndian.Uint16(sub[40:]) {
			case 0:
			case 1:
				return wasiNotsup
			default:
				return wasiInval
			}
		case 1, 2: // fd_read, fd_write: the descriptor at 16
			fd := int32(binary.LittleEndian.Uint32(sub[16:]))
			switch {
			case fd < 0:
				return wasiBadf
			case fd > 2:
				errno = wasiBadf
			case kind == 2:
				errno = wasiNotsup
			}
		default:
			return wasiInval
		}
		copy(ev[:8], sub[:8]) // userdata
		binary.LittleEndian.PutUint16(ev[8:], errno)
		ev[10] = kind
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], n)
	return errnoOf(mem.Write(result, b[:]))
}

// proc_exit(code): the guest exits, as on wazero: the import raises
// sys.ExitError (the call into the guest returns it) and the instance is
// closed to further calls, which return it again.
func wasiProcExit(st *wasmtimeState, _ engine.Memory, stack []uint64) {
	code := uint32(stack[0])
	st.exited = &code
	panic(sys.NewExitError(code))
}

// random_get(buf, len) -> errno: the world's random source.
func wasiRandomGet(st *wasmtimeState, mem engine.Memory, stack []uint64) {
	b, ok := mem.Read(uint32(stack[0]), uint32(stack[1]))
	if !ok {
		stack[0] = wasiFault
		return
	}
	if _, err := st.world.Read(b); err != nil {
		stack[0] = wasiFault
		return
	}
	stack[0] = wasiSuccess
}

// sched_yield() -> errno: nothing to yield to (wazero's default osyield
// returns at once).
func wasiSchedYield(_ *wasmtimeState, _ engine.Memory, stack []uint64) {
	stack[0] = wasiSuccess
}

// sock_accept, sock_recv, sock_send, sock_shutdown(fd, ...) -> errno: no
// descriptor is a socket, EBADF (as wazero's without sockets).
func wasiSock(_ *wasmtimeState, _ engine.Memory, stack []uint64) {
	stack[0] = wasiBadf
}

func errnoOf(ok bool) uint64 {
	if ok {
		return wasiSuccess
	}
	return wasiFault
}
