package wasmtime

/*
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// What this file uses of wasmtime's C API (wasmtime.h of wasmtime-go v39,
// whose static library wasmtime-go links), declared here because cgo
// cannot include another module's headers. The structs mirror the
// header's layouts.
typedef struct wasmtime_context wasmtime_context_t;
typedef struct wasmtime_error wasmtime_error_t;
typedef struct wasm_trap_t wasm_trap_t;
typedef struct { size_t size; char *data; } ptcx_byte_vec_t;        // wasm_byte_vec_t
typedef struct { uint64_t store_id; void *private_; } ptcx_func_t;  // wasmtime_func_t
typedef struct { uint8_t kind; ptcx_func_t fn; } ptcx_extern_t;     // wasmtime_extern_t, a function
typedef union { int32_t i32; int64_t i64; uint64_t v128[2]; } ptcx_val_raw_t; // wasmtime_val_raw_t

wasmtime_error_t *wasmtime_func_call_unchecked(wasmtime_context_t *store, const ptcx_func_t *func,
	ptcx_val_raw_t *args_and_results, size_t args_and_results_len, wasm_trap_t **trap);
bool wasmtime_trap_code(const wasm_trap_t *trap, uint8_t *code);
void wasm_trap_message(const wasm_trap_t *trap, ptcx_byte_vec_t *out);
void wasm_trap_delete(wasm_trap_t *trap);
void wasmtime_error_message(const wasmtime_error_t *error, ptcx_byte_vec_t *out);
void wasmtime_error_delete(wasmtime_error_t *error);
void wasm_byte_vec_delete(ptcx_byte_vec_t *vec);

// What the host imports use (engine_wasmtime_imports.go): wasmtime calls
// them through ptcx_import, with their arguments as raw values and no
// per-call allocation, instead of wasmtime-go's typed trampoline.
typedef struct wasmtime_linker wasmtime_linker_t;
typedef struct wasmtime_caller wasmtime_caller_t;
typedef struct wasm_valtype_t wasm_valtype_t;
typedef struct wasm_functype_t wasm_functype_t;
typedef struct { size_t size; wasm_valtype_t **data; } ptcx_valtype_vec_t;          // wasm_valtype_vec_t
typedef struct { struct { uint64_t store_id; uint32_t private1; } id; uint32_t private2; } ptcx_memory_t; // wasmtime_memory_t (and _table_t)
typedef struct { uint64_t store_id; uint32_t private1, private2, private3; } ptcx_global_t;               // wasmtime_global_t
typedef struct {                                                                                        // wasmtime_extern_t, whole
	uint8_t kind;
	union { ptcx_func_t fn; ptcx_global_t global; ptcx_memory_t table; ptcx_memory_t memory; void *shared; } of;
} ptcx_extern_any_t;
// The sizes of v39's header on a 64-bit target (wasmtime_extern_t is
// written by wasmtime_caller_export_get: it must be whole).
_Static_assert(sizeof(ptcx_memory_t) == 24, "wasmtime_memory_t");
_Static_assert(sizeof(ptcx_extern_any_t) == 32, "wasmtime_extern_t");
_Static_assert(sizeof(ptcx_val_raw_t) == 16, "wasmtime_val_raw_t");
_Static_assert(sizeof(ptcx_valtype_vec_t) == 16, "wasm_valtype_vec_t");
typedef wasm_trap_t *(*ptcx_unchecked_callback_t)(void *env, wasmtime_caller_t *caller,
	ptcx_val_raw_t *args_and_results, size_t n);

wasm_valtype_t *wasm_valtype_new(uint8_t kind);
void wasm_valtype_vec_new(ptcx_valtype_vec_t *out, size_t n, wasm_valtype_t *const data[]);
wasm_functype_t *wasm_functype_new(ptcx_valtype_vec_t *params, ptcx_valtype_vec_t *results);
void wasm_functype_delete(wasm_functype_t *ty);
wasmtime_error_t *wasmtime_linker_define_func_unchecked(wasmtime_linker_t *linker, const char *module,
	size_t module_len, const char *name, size_t name_len, const wasm_functype_t *ty,
	ptcx_unchecked_callback_t cb, void *data, void (*finalizer)(void *));
wasmtime_context_t *wasmtime_caller_context(wasmtime_caller_t *caller);
bool wasmtime_caller_export_get(wasmtime_caller_t *caller, const char *name, size_t name_len,
	ptcx_extern_any_t *item);
void wasmtime_extern_delete(ptcx_extern_any_t *item);
uint8_t *wasmtime_memory_data(const wasmtime_context_t *store, const ptcx_memory_t *memory);
size_t wasmtime_memory_data_size(const wasmtime_context_t *store, const ptcx_memory_t *memory);
wasmtime_error_t *wasmtime_memory_grow(wasmtime_context_t *store, const ptcx_memory_t *memory,
	uint64_t delta, uint64_t *prev_size);
wasm_trap_t *wasmtime_trap_new(const char *msg, size_t msg_len);

// ptcxWasmtimeImport is the Go side of every host import
// (engine_wasmtime_imports.go).
extern void *ptcxWasmtimeImport(uintptr_t which, void *cx, void *data, size_t size, void *memory,
	void *args, size_t n);

// ptcx_import is the callback of every host import; env is the import's
// index. It looks up the caller's exported memory here, in C, so that the
// Go side needs no cgo call to reach it.
static wasm_trap_t *ptcx_import(void *env, wasmtime_caller_t *caller, ptcx_val_raw_t *args, size_t n) {
	wasmtime_context_t *cx = wasmtime_caller_context(caller);
	ptcx_extern_any_t ext;
	uint8_t *data = NULL;
	size_t size = 0;
	ptcx_memory_t *memory = NULL;
	if (wasmtime_caller_export_get(caller, "memory", 6, &ext)) {
		if (ext.kind == 3) { // WASMTIME_EXTERN_MEMORY, owning nothing
			memory = &ext.of.memory;
			data = wasmtime_memory_data(cx, memory);
			size = wasmtime_memory_data_size(cx, memory);
		} else {
			wasmtime_extern_delete(&ext);
		}
	}
	return (wasm_trap_t *)ptcxWasmtimeImport((uintptr_t)env, cx, data, size, memory, args, n);
}

// ptcx_define defines module.name in linker as the import of index which,
// of i32 and i64 parameters and results (wasm_valkind_t: 0 and 1).
static wasmtime_error_t *ptcx_define(wasmtime_linker_t *linker, const char *module, size_t module_len,
	const char *name, size_t name_len, const uint8_t *params, size_t np, const uint8_t *results, size_t nr,
	uintptr_t which) {
	wasm_valtype_t *types[16];
	ptcx_valtype_vec_t p, r;
	for (size_t i = 0; i < np; i++) types[i] = wasm_valtype_new(params[i]);
	wasm_valtype_vec_new(&p, np, types);
	for (size_t i = 0; i < nr; i++) types[i] = wasm_valtype_new(results[i]);
	wasm_valtype_vec_new(&r, nr, types);
	wasm_functype_t *ty = wasm_functype_new(&p, &r);
	wasmtime_error_t *err = wasmtime_linker_define_func_unchecked(linker, module, module_len, name, name_len,
		ty, ptcx_import, (void *)which, NULL);
	wasm_functype_delete(ty);
	return err;
}

// ptcx_grow grows memory by delta pages and looks its data up again.
static wasmtime_error_t *ptcx_grow(wasmtime_context_t *cx, const ptcx_memory_t *memory, uint64_t delta,
	uint64_t *prev, uint8_t **data, size_t *size) {
	wasmtime_error_t *err = wasmtime_memory_grow(cx, memory, delta, prev);
	*data = wasmtime_memory_data(cx, memory);
	*size = wasmtime_memory_data_size(cx, memory);
	return err;
}

// ptcx_call_failure says how a call failed.
typedef struct {
	int what;             // 0 none, 1 a trap, 2 an error
	int has_code;         // a trap with a code
	uint8_t code;         // its wasmtime_trap_code_t
	ptcx_byte_vec_t msg;  // its message, for the caller to delete
	size_t line;          // the length of the message's first line
} ptcx_call_failure;

// ptcx_call calls func with args (the results replace them) and, if it
// fails, describes the trap or error in *f and frees it: one cgo call per
// export call, and a second one on failure to delete f->msg.
static void ptcx_call(wasmtime_context_t *cx, const ptcx_func_t *func, ptcx_val_raw_t *args, size_t n,
	ptcx_call_failure *f) {
	wasm_trap_t *trap = NULL;
	wasmtime_error_t *err = wasmtime_func_call_unchecked(cx, func, args, n, &trap);
	if (err == NULL && trap == NULL) {
		return;
	}
	if (trap != NULL) {
		f->what = 1;
		f->has_code = wasmtime_trap_code(trap, &f->code);
		wasm_trap_message(trap, &f->msg);
	} else {
		f->what = 2;
		wasmtime_error_message(err, &f->msg);
	}
	const char *nl = f->msg.size > 0 ? memchr(f->msg.data, '\n', f->msg.size) : NULL;
	f->line = nl != NULL ? (size_t)(nl - f->msg.data) : f->msg.size;
	if (trap != NULL) {
		wasm_trap_delete(trap);
	}
	if (err != NULL) {
		wasmtime_error_delete(err);
	}
}
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"
)

// rawFunc is an exported function as wasmtime's C API names it, called
// through wasmtime_func_call_unchecked: wasmtime-go's Func.Call looks up
// the function's type at every call (C allocations freed by finalizers),
// boxes each argument and takes a global lock, which cost as much as the
// rest of an awaited nested call's host side.
type rawFunc struct {
	store   *wasmtime.Store
	cx      *C.wasmtime_context_t // the store's, as long as the store lives
	fn      C.ptcx_func_t
	params  int
	results int
}

// errWasmtimeLayout is returned when a value of wasmtime-go's (a function's
// extern, a linker) is not laid out as this file expects (another
// wasmtime-go version than v39).
var errWasmtimeLayout = errors.New("wasmhost: wasmtime: wasmtime-go's values do not have the layout of wasmtime-go v39")

// newRawFunc returns f, a function of store, as a rawFunc.
func newRawFunc(store *wasmtime.Store, f *wasmtime.Func, params, results int) (rawFunc, error) {
	ext := f.AsExtern()
	if unsafe.Sizeof(ext) < unsafe.Sizeof(C.ptcx_extern_t{}) {
		return rawFunc{}, errWasmtimeLayout
	}
	e := (*C.ptcx_extern_t)(unsafe.Pointer(&ext))
	if e.kind != 0 || e.fn.store_id == 0 { // WASMTIME_EXTERN_FUNC; a function's store is never 0
		return rawFunc{}, errWasmtimeLayout
	}
	cx := (*C.wasmtime_context_t)(unsafe.Pointer(store.Context()))
	return rawFunc{store: store, cx: cx, fn: e.fn, params: params, results: results}, nil
}

// call calls the function with the parameters in stack (i32 as their low
// 32 bits, i64) and leaves its result in stack[0]. A failure is a
// *wasmtimeTrap named as wazero names it, or wasmtime's error.
func (f *rawFunc) call(stack []uint64) error {
	var raw [4]C.ptcx_val_raw_t
	n := max(f.params, f.results)
	if n > len(raw) || f.params > len(stack) || f.results > len(stack) {
		return fmt.Errorf("wasmhost: wasmtime: an export of %d parameters and %d results, past the %d this host calls", f.params, f.results, len(raw))
	}
	for i := range f.params { // an i32 is the low half, little-endian
		binary.LittleEndian.PutUint64(rawBytes(&raw[i]), stack[i])
	}
	var failure C.ptcx_call_failure
	C.ptcx_call(f.cx, &f.fn, &raw[0], C.size_t(n), &failure)
	runtime.KeepAlive(f.store)
	if failure.what == 0 {
		if f.results > 0 {
			stack[0] = binary.LittleEndian.Uint64(rawBytes(&raw[0]))
		}
		return nil
	}
	// The first line is what the host uses (trapMessage); the rest of a
	// trap's message is wasmtime's backtrace.
	msg := C.GoStringN(failure.msg.data, C.int(failure.line))
	C.wasm_byte_vec_delete(&failure.msg)
	switch failure.what {
	case 1:
		var code *wasmtime.TrapCode
		if failure.has_code != 0 {
			c := wasmtime.TrapCode(failure.code)
			code = &c
		}
		return &wasmtimeTrap{msg: trapMessage(code, msg)}
	default:
		return fmt.Errorf("wasmhost: wasmtime: %s", msg)
	}
}

// rawBytes is the memory of v.
func rawBytes(v *C.ptcx_val_raw_t) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v))
}

// linkerOf returns the C linker of l, a linker of eng, read from
// wasmtime-go v39's Linker: its first field; its second is its public
// Engine, which must be eng there (a check of the layout).
func linkerOf(l *wasmtime.Linker, eng *wasmtime.Engine) (*C.wasmtime_linker_t, error) {
	type layout struct {
		ptr    unsafe.Pointer
		engine *wasmtime.Engine
	}
	if unsafe.Sizeof(*l) != unsafe.Sizeof(layout{}) {
		return nil, errWasmtimeLayout
	}
	v := (*layout)(unsafe.Pointer(l))
	if v.ptr == nil || eng == nil || v.engine != eng || l.Engine != eng {
		return nil, errWasmtimeLayout
	}
	return (*C.wasmtime_linker_t)(v.ptr), nil
}

// defineRaw defines module.name in l, a linker of eng, as the host import of index which
// (wasmtimeImports), of the parameter and result kinds given
// (wasmtime.KindI32 or KindI64).
func defineRaw(l *wasmtime.Linker, eng *wasmtime.Engine, module, name string, params, results []wasmtime.ValKind, which int) error {
	linker, err := linkerOf(l, eng)
	if err != nil {
		return err
	}
	if len(params) > 16 || len(results) > 16 {
		return fmt.Errorf("wasmhost: wasmtime: an import of %d parameters and %d results", len(params), len(results))
	}
	kinds := func(ks []wasmtime.ValKind) (*C.uint8_t, []C.uint8_t) {
		out := make([]C.uint8_t, len(ks)+1) // never empty, so &out[0] exists
		for i, k := range ks {
			if k != wasmtime.KindI32 && k != wasmtime.KindI64 {
				return nil, nil
			}
			out[i] = C.uint8_t(k)
		}
		return &out[0], out
	}
	p, pk := kinds(params)
	r, rk := kinds(results)
	if p == nil || r == nil {
		return fmt.Errorf("wasmhost: wasmtime: an import of %s.%s takes or returns a value other than i32 and i64", module, name)
	}
	cm, cn := C.CString(module), C.CString(name)
	defer C.free(unsafe.Pointer(cm))
	defer C.free(unsafe.Pointer(cn))
	e := C.ptcx_define(linker, cm, C.size_t(len(module)), cn, C.size_t(len(name)),
		p, C.size_t(len(params)), r, C.size_t(len(results)), C.uintptr_t(which))
	runtime.KeepAlive(l)
	runtime.KeepAlive(pk)
	runtime.KeepAlive(rk)
	if e != nil {
		return fmt.Errorf("wasmhost: wasmtime: define %s.%s: %s", module, name, takeError(e))
	}
	return nil
}

// takeError is the message of e, which it deletes.
func takeError(e *C.wasmtime_error_t) string {
	var msg C.ptcx_byte_vec_t
	C.wasmtime_error_message(e, &msg)
	s := C.GoStringN(msg.data, C.int(msg.size))
	C.wasm_byte_vec_delete(&msg)
	C.wasmtime_error_delete(e)
	return s
}

// newTrap returns a trap of message msg, for wasmtime to raise in the
// guest (it takes the trap's ownership).
func newTrap(msg string) unsafe.Pointer {
	cs := C.CString(msg)
	defer C.free(unsafe.Pointer(cs))
	return unsafe.Pointer(C.wasmtime_trap_new(cs, C.size_t(len(msg))))
}

// growRaw grows the memory (a *wasmtime_memory_t of the caller's context
// cx, valid during the import call) by delta pages; it returns the size it
// had, in pages, and its data after.
func growRaw(cx, memory unsafe.Pointer, delta uint32) (prev uint32, data []byte, ok bool) {
	var before C.uint64_t
	var ptr *C.uint8_t
	var size C.size_t
	e := C.ptcx_grow((*C.wasmtime_context_t)(cx), (*C.ptcx_memory_t)(memory), C.uint64_t(delta), &before, &ptr, &size)
	if size > 0 {
		data = unsafe.Slice((*byte)(unsafe.Pointer(ptr)), int(size))
	}
	if e != nil {
		C.wasmtime_error_delete(e)
		return 0, data, false
	}
	return uint32(before), data, true
}
