//go:build wasmtime

package wasmhost

/*
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

// errWasmtimeLayout is returned when wasmtime-go's function value is not
// laid out as this file's C declarations expect (another wasmtime-go
// version than v39).
var errWasmtimeLayout = errors.New("wasmhost: wasmtime: wasmtime-go's function value does not have the layout of wasmtime v39's C API")

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
