//go:build wasmtime

package wasmhost

import (
	"encoding/binary"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"
)

// The imports of the guest on wasmtime: the ptcx module (hostImports, the
// same functions wazero calls) and the six WASI functions the guest
// imports, which behave as wazero's do with the configuration of
// moduleConfig: no arguments, environment or files; standard output and
// error accept and discard what is written; the clocks and the random
// source are the instance's world.

// WASI errno values (wasi_snapshot_preview1).
const (
	wasiSuccess = 0
	wasiBadf    = 8
	wasiFault   = 21
	wasiInval   = 28
	wasiSpipe   = 70
)

const wasiModule = "wasi_snapshot_preview1"

func (c *wasmtimeCore) defineImports() error {
	i32, i64 := wasmtime.KindI32, wasmtime.KindI64
	for _, h := range hostImports {
		params, results := make([]wasmtime.ValKind, h.params), make([]wasmtime.ValKind, h.results)
		for n := range params {
			params[n] = i32
		}
		for n := range results {
			results[n] = i32
		}
		fn, width := h.fn, max(h.params, h.results)
		err := c.define(hostModule, h.name, params, results, func(st *wasmtimeState, mem guestMemory, stack []uint64) {
			fn(st.ctx, mem, stack[:width])
		})
		if err != nil {
			return err
		}
	}
	wasi := []struct {
		name            string
		params, results []wasmtime.ValKind
		fn              func(st *wasmtimeState, mem guestMemory, stack []uint64)
	}{
		{"clock_time_get", []wasmtime.ValKind{i32, i64, i32}, []wasmtime.ValKind{i32}, wasiClockTimeGet},
		{"fd_close", []wasmtime.ValKind{i32}, []wasmtime.ValKind{i32}, wasiFdClose},
		{"fd_fdstat_get", []wasmtime.ValKind{i32, i32}, []wasmtime.ValKind{i32}, wasiFdFdstatGet},
		{"fd_seek", []wasmtime.ValKind{i32, i64, i32, i32}, []wasmtime.ValKind{i32}, wasiFdSeek},
		{"fd_write", []wasmtime.ValKind{i32, i32, i32, i32}, []wasmtime.ValKind{i32}, wasiFdWrite},
		{"random_get", []wasmtime.ValKind{i32, i32}, []wasmtime.ValKind{i32}, wasiRandomGet},
	}
	for _, w := range wasi {
		if err := c.define(wasiModule, w.name, w.params, w.results, w.fn); err != nil {
			return err
		}
	}
	return nil
}

// define defines one import, store-independent: the instance is the
// caller's store data. Parameters and results pass as a stack of raw bits,
// as wazero's host functions take them.
func (c *wasmtimeCore) define(module, name string, params, results []wasmtime.ValKind,
	fn func(st *wasmtimeState, mem guestMemory, stack []uint64)) error {
	types := func(kinds []wasmtime.ValKind) []*wasmtime.ValType {
		out := make([]*wasmtime.ValType, len(kinds))
		for n, k := range kinds {
			out[n] = wasmtime.NewValType(k)
		}
		return out
	}
	ty := wasmtime.NewFuncType(types(params), types(results))
	return c.linker.FuncNew(module, name, ty, func(caller *wasmtime.Caller, args []wasmtime.Val) (_ []wasmtime.Val, trap *wasmtime.Trap) {
		st := caller.Data().(*wasmtimeState)
		// A panic (errStop) traps the guest, and the call into the guest
		// that ran this raises it again (wasmtimeCall): wasmtime-go keeps
		// a panic for its own Func.Call to raise, and exports are called
		// without it (rawFunc).
		mem := &st.callerMem
		*mem = callerMemory{mem: st.memory, caller: caller}
		defer func() {
			*mem = callerMemory{} // the caller is not valid after the call
			if p := recover(); p != nil {
				st.panicked = p
				trap = wasmtime.NewTrap("wasmhost: an import stopped the guest")
			}
		}()
		var stack [4]uint64
		for n, a := range args {
			if a.Kind() == wasmtime.KindI64 {
				stack[n] = uint64(a.I64())
			} else {
				stack[n] = uint64(uint32(a.I32()))
			}
		}
		fn(st, mem, stack[:])
		if len(results) == 0 {
			return nil, nil
		}
		return []wasmtime.Val{wasmtime.ValI32(int32(uint32(stack[0])))}, nil
	})
}

// callerMemory is the guest's memory during one import call, seen through
// the caller. Its data is looked up at the first access and kept for the
// call (a lookup is three cgo calls): only a growth moves it, and one
// during an import is the import's own (Grow looks it up again).
type callerMemory struct {
	mem    *wasmtime.Memory // nil for a module without memory
	caller *wasmtime.Caller
	data   []byte
	looked bool // data is the memory's
}

func (m *callerMemory) bytes() []byte {
	if !m.looked && m.mem != nil {
		m.data, m.looked = m.mem.UnsafeData(m.caller), true
	}
	return m.data
}

func (m *callerMemory) Size() uint32 { return uint32(len(m.bytes())) }

func (m *callerMemory) Read(offset, n uint32) ([]byte, bool) {
	data := m.bytes()
	if uint64(offset)+uint64(n) > uint64(len(data)) {
		return nil, false
	}
	return data[offset : offset+n : offset+n], true
}

func (m *callerMemory) Write(offset uint32, v []byte) bool {
	data := m.bytes()
	if uint64(offset)+uint64(len(v)) > uint64(len(data)) {
		return false
	}
	copy(data[offset:], v)
	return true
}

func (m *callerMemory) ReadUint32Le(offset uint32) (uint32, bool) {
	b, ok := m.Read(offset, 4)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b), true
}

func (m *callerMemory) Grow(delta uint32) (uint32, bool) {
	if m.mem == nil {
		return 0, false
	}
	m.data, m.looked = nil, false
	prev, err := m.mem.Grow(m.caller, uint64(delta))
	if err != nil {
		return 0, false
	}
	return uint32(prev), true
}

// clock_time_get(id, precision, result_ptr) -> errno: the realtime (0) and
// monotonic (1) clocks, in ns; the CPU-time clocks are not offered.
func wasiClockTimeGet(st *wasmtimeState, mem guestMemory, stack []uint64) {
	var t int64
	switch uint32(stack[0]) {
	case 0:
		sec, nsec := st.world.walltime()
		t = sec*1e9 + int64(nsec)
	case 1:
		t = st.world.nanotime()
	default:
		stack[0] = wasiInval
		return
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(t))
	stack[0] = errnoOf(mem.Write(uint32(stack[2]), b[:]))
}

// fd_close(fd) -> errno
func wasiFdClose(_ *wasmtimeState, _ guestMemory, stack []uint64) {
	stack[0] = stdioErrno(uint32(stack[0]))
}

// fd_fdstat_get(fd, result_ptr) -> errno: the standard streams are
// character devices.
func wasiFdFdstatGet(_ *wasmtimeState, mem guestMemory, stack []uint64) {
	if e := stdioErrno(uint32(stack[0])); e != wasiSuccess {
		stack[0] = e
		return
	}
	var b [24]byte
	b[0] = 2 // character device
	stack[0] = errnoOf(mem.Write(uint32(stack[1]), b[:]))
}

// fd_seek(fd, offset, whence, result_ptr) -> errno: a stream cannot seek.
func wasiFdSeek(_ *wasmtimeState, _ guestMemory, stack []uint64) {
	if e := stdioErrno(uint32(stack[0])); e != wasiSuccess {
		stack[0] = e
		return
	}
	stack[0] = wasiSpipe
}

// fd_write(fd, iovs, iovs_len, result_ptr) -> errno: standard output and
// error discard what is written; nothing else is open.
func wasiFdWrite(_ *wasmtimeState, mem guestMemory, stack []uint64) {
	fd := uint32(stack[0])
	if fd != 1 && fd != 2 {
		stack[0] = wasiBadf
		return
	}
	iovs, n := uint32(stack[1]), uint32(stack[2])
	if uint64(n)*8 > uint64(mem.Size()) {
		stack[0] = wasiFault
		return
	}
	vec, ok := mem.Read(iovs, n*8)
	if !ok {
		stack[0] = wasiFault
		return
	}
	var total uint32
	for i := uint32(0); i < n; i++ {
		total += binary.LittleEndian.Uint32(vec[i*8+4:])
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], total)
	stack[0] = errnoOf(mem.Write(uint32(stack[3]), b[:]))
}

// random_get(buf, len) -> errno: the world's random source.
func wasiRandomGet(st *wasmtimeState, mem guestMemory, stack []uint64) {
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

// stdioErrno is success for the standard streams, else EBADF.
func stdioErrno(fd uint32) uint64 {
	if fd <= 2 {
		return wasiSuccess
	}
	return wasiBadf
}

func errnoOf(ok bool) uint64 {
	if ok {
		return wasiSuccess
	}
	return wasiFault
}
