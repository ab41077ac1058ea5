package wasmtime

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"sync"
	"unsafe"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
	"github.com/ptcx/ptcx/wasmhost/internal/wasifs"
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

func (c *wasmtimeCore) defineImports(host []engine.HostFunc) error {
	i32, i64 := wasmtime.KindI32, wasmtime.KindI64
	for _, h := range host {
		params, results := make([]wasmtime.ValKind, h.Params), make([]wasmtime.ValKind, h.Results)
		for n := range params {
			params[n] = i32
		}
		for n := range results {
			results[n] = i32
		}
		fn, width := h.Fn, max(h.Params, h.Results)
		err := c.define(abi.HostModule, h.Name, params, results, func(st *wasmtimeState, mem engine.Memory, stack []uint64) {
			fn(st.ctx, mem, stack[:width])
		})
		if err != nil {
			return err
		}
	}
	wasi := []struct {
		name            string
		params, results []wasmtime.ValKind
		fn              func(st *wasmtimeState, mem engine.Memory, stack []uint64)
	}{
		{"clock_time_get", []wasmtime.ValKind{i32, i64, i32}, []wasmtime.ValKind{i32}, wasiClockTimeGet},
		{"fd_close", []wasmtime.ValKind{i32}, []wasmtime.ValKind{i32}, wasiFdClose},
		{"fd_fdstat_get", []wasmtime.ValKind{i32, i32}, []wasmtime.ValKind{i32}, wasiFdFdstatGet},
		{"fd_seek", []wasmtime.ValKind{i32, i64, i32, i32}, []wasmtime.ValKind{i32}, wasiFdSeek},
		{"fd_write", []wasmtime.ValKind{i32, i32, i32, i32}, []wasmtime.ValKind{i32}, wasiFdWrite},
		{"random_get", []wasmtime.ValKind{i32, i32}, []wasmtime.ValKind{i32}, wasiRandomGet},
	}
	// The file functions of an instance with a file system (the Python
	// guest's: NewFS) are package wasifs's on its table; an instance
	// without one has the four above, the QuickJS guest's, and none else.
	own := map[string]func(st *wasmtimeState, mem engine.Memory, stack []uint64){}
	for _, w := range wasi {
		own[w.name] = w.fn
	}
	for _, f := range wasifs.Funcs {
		params := make([]wasmtime.ValKind, len(f.Params))
		for n, k := range f.Params {
			params[n] = i32
			if k == 'I' {
				params[n] = i64
			}
		}
		fn, without := f.Fn, own[f.Name]
		delete(own, f.Name)
		if without == nil {
			without = wasiNoFiles
		}
		err := c.define(wasiModule, f.Name, params, []wasmtime.ValKind{i32}, func(st *wasmtimeState, mem engine.Memory, stack []uint64) {
			if st.files == nil {
				without(st, mem, stack)
				return
			}
			fn(st.files, mem, stack)
		})
		if err != nil {
			return err
		}
	}
	for _, w := range wasi {
		if own[w.name] == nil {
			continue // defined above
		}
		if err := c.define(wasiModule, w.name, w.params, w.results, w.fn); err != nil {
			return err
		}
	}
	return c.definePythonWASI()
}

// wasiNoFiles is a file function of an instance without a file system:
// it has no descriptor but the standard streams.
func wasiNoFiles(_ *wasmtimeState, _ engine.Memory, stack []uint64) { stack[0] = wasiBadf }

// wasmtimeImport is one host import as wasmtime calls it: fn with its
// parameters and results as a stack of raw bits, as wazero's host
// functions take them.
type wasmtimeImport struct {
	name   string               // module.name, for errors
	params int                  // how many parameters
	i64    [maxImportWidth]bool // which parameters are i64 (the rest are i32)
	width  int                  // the stack fn takes: max(parameters, results)
	i32    bool                 // fn returns one i32 in stack[0]
	fn     func(st *wasmtimeState, mem engine.Memory, stack []uint64)
}

// maxImportWidth bounds an import's parameters and results: path_open's
// nine (wasifs.Funcs) the most.
const maxImportWidth = 9

// wasmtimeImports are the imports defined, by the index wasmtime passes
// back (ptcxWasmtimeImport); written once, under wasmtimeShared.
var wasmtimeImports []wasmtimeImport

// define defines one import, store-independent (the instance is found by
// the caller's store, wasmtimeStores): wasmtime calls it through
// ptcx_import (engine_wasmtime_call.go) with its arguments as raw values.
func (c *wasmtimeCore) define(module, name string, params, results []wasmtime.ValKind,
	fn func(st *wasmtimeState, mem engine.Memory, stack []uint64)) error {
	imp := wasmtimeImport{name: module + "." + name, params: len(params), width: max(len(params), len(results)), fn: fn}
	if imp.width > len(imp.i64) || len(results) > 1 || (len(results) == 1 && results[0] != wasmtime.KindI32) {
		return fmt.Errorf("wasmhost: wasmtime: the import %s has %d parameters and %d results", imp.name, len(params), len(results))
	}
	for n, k := range params {
		imp.i64[n] = k == wasmtime.KindI64
	}
	imp.i32 = len(results) == 1
	if err := defineRaw(c.linker, c.engine, module, name, params, results, len(wasmtimeImports)); err != nil {
		return err
	}
	wasmtimeImports = append(wasmtimeImports, imp)
	return nil
}

// wasmtimeStores maps a live store's context (a *wasmtime_context_t, which
// an import's caller gives) to its instance's state; the store is kept
// with it, so that it cannot be collected, and its context's address
// reused, while it is mapped (register, unregister).
var wasmtimeStores sync.Map // uintptr → wasmtimeStore

type wasmtimeStore struct {
	st    *wasmtimeState
	store *wasmtime.Store
}

// register maps store's context to st until unregister.
func register(store *wasmtime.Store, st *wasmtimeState) error {
	cx := uintptr(unsafe.Pointer(store.Context()))
	if _, dup := wasmtimeStores.LoadOrStore(cx, wasmtimeStore{st: st, store: store}); dup {
		return fmt.Errorf("wasmhost: wasmtime: a new store has the context of a live one (%#x)", cx)
	}
	return nil
}

// unregister forgets store, before it is closed.
func unregister(store *wasmtime.Store) {
	wasmtimeStores.Delete(uintptr(unsafe.Pointer(store.Context())))
}

// ptcxWasmtimeImport runs the import of index which for the guest of the
// store whose context is cx; data and size are the caller's exported
// memory (nil and 0 for none), memory its wasmtime_memory_t (for growth),
// args its n raw arguments, where the result goes. It returns a trap for
// wasmtime to raise, or nil. A panic (errStop) traps the guest, and the
// call into the guest that ran this raises it again (wasmtimeCall).
//
//export ptcxWasmtimeImport
func ptcxWasmtimeImport(which C.uintptr_t, cx, data unsafe.Pointer, size C.size_t, memory, args unsafe.Pointer, n C.size_t) (trap unsafe.Pointer) {
	if uint64(which) >= uint64(len(wasmtimeImports)) {
		return newTrap("wasmhost: wasmtime: an import the host did not define")
	}
	imp := &wasmtimeImports[which]
	v, ok := wasmtimeStores.Load(uintptr(cx))
	if !ok {
		return newTrap("wasmhost: wasmtime: " + imp.name + " called from a store the host does not know")
	}
	if int(n) < imp.width {
		return newTrap("wasmhost: wasmtime: " + imp.name + " called with too few values")
	}
	st := v.(wasmtimeStore).st
	mem := &st.callerMem
	*mem = callerMemory{cx: cx, memory: memory}
	if data != nil {
		mem.data = unsafe.Slice((*byte)(data), int(size))
	}
	defer func() {
		*mem = callerMemory{} // the memory is not the import's after the call
		if p := recover(); p != nil {
			st.panicked = p
			trap = newTrap("wasmhost: an import stopped the guest")
		}
	}()
	raw := unsafe.Slice((*[2]uint64)(args), imp.width) // wasmtime_val_raw_t: 16 bytes, an i32 or i64 first
	var stack [maxImportWidth]uint64
	for i := range imp.params {
		if imp.i64[i] {
			stack[i] = raw[i][0]
		} else {
			stack[i] = uint64(uint32(raw[i][0]))
		}
	}
	imp.fn(st, mem, stack[:imp.width])
	if imp.i32 {
		raw[0][0] = uint64(uint32(stack[0]))
	}
	return nil
}

// callerMemory is the guest's memory during one import call, as the caller
// exports it: ptcx_import looked its data up (only a growth moves it, and
// one during an import is the import's own: Grow looks it up again).
type callerMemory struct {
	cx     unsafe.Pointer // the caller's *wasmtime_context_t
	memory unsafe.Pointer // its *wasmtime_memory_t, nil for a module without memory
	data   []byte
}

func (m *callerMemory) Size() uint32 { return uint32(len(m.data)) }

func (m *callerMemory) Read(offset, n uint32) ([]byte, bool) {
	if uint64(offset)+uint64(n) > uint64(len(m.data)) {
		return nil, false
	}
	return m.data[offset : offset+n : offset+n], true
}

func (m *callerMemory) Write(offset uint32, v []byte) bool {
	if uint64(offset)+uint64(len(v)) > uint64(len(m.data)) {
		return false
	}
	copy(m.data[offset:], v)
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
	if m.memory == nil {
		return 0, false
	}
	prev, data, ok := growRaw(m.cx, m.memory, delta)
	m.data = data
	return prev, ok
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

// fd_close(fd) -> errno
func wasiFdClose(_ *wasmtimeState, _ engine.Memory, stack []uint64) {
	stack[0] = stdioErrno(uint32(stack[0]))
}

// fd_fdstat_get(fd, result_ptr) -> errno: the standard streams are
// character devices.
func wasiFdFdstatGet(_ *wasmtimeState, mem engine.Memory, stack []uint64) {
	if e := stdioErrno(uint32(stack[0])); e != wasiSuccess {
		stack[0] = e
		return
	}
	var b [24]byte
	b[0] = 2 // character device
	stack[0] = errnoOf(mem.Write(uint32(stack[1]), b[:]))
}

// fd_seek(fd, offset, whence, result_ptr) -> errno: a stream cannot seek.
func wasiFdSeek(_ *wasmtimeState, _ engine.Memory, stack []uint64) {
	if e := stdioErrno(uint32(stack[0])); e != wasiSuccess {
		stack[0] = e
		return
	}
	stack[0] = wasiSpipe
}

// fd_write(fd, iovs, iovs_len, result_ptr) -> errno: standard output and
// error discard what is written; nothing else is open.
func wasiFdWrite(_ *wasmtimeState, mem engine.Memory, stack []uint64) {
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
