package wasmtime

import (
	"encoding/binary"
	"fmt"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/ptcx/ptcx/wasmhost/internal/engine"
	"github.com/ptcx/ptcx/wasmhost/internal/wasifs"
)

// The WASI file functions on wasmtime: package wasifs's (wasifs.Funcs, as
// the wazero engine's with a file system), on the table of the calling
// instance (wasmtimeState.files) when its engine has a file system
// (NewFS). An instance without one (the QuickJS guest's) has only the
// standard streams, as on wazero: fd_close, fd_fdstat_get, fd_seek and
// fd_write, the four of these its guest imports, behave as wazero's do
// with the configuration of engine.moduleConfig (writes are discarded,
// nothing is closed, a stream cannot seek); the other file functions are
// EBADF for every descriptor.

// wasiFileFuncs are the file functions, with wasifs's signatures.
func wasiFileFuncs() ([]wasiFunc, error) {
	out := make([]wasiFunc, 0, len(wasifs.Funcs))
	for _, f := range wasifs.Funcs {
		params := make([]wasmtime.ValKind, len(f.Params))
		for i, k := range f.Params {
			switch k {
			case 'i':
				params[i] = wasmtime.KindI32
			case 'I':
				params[i] = wasmtime.KindI64
			default:
				return nil, fmt.Errorf("wasmhost: wasmtime: wasifs's %s has a parameter of kind %q (i or I)", f.Name, k)
			}
		}
		fn, bare := f.Fn, stdioFuncs[f.Name]
		out = append(out, wasiFunc{name: f.Name, params: params, fn: func(st *wasmtimeState, mem engine.Memory, stack []uint64) {
			switch {
			case st.files != nil:
				fn(st.files, mem, stack)
			case bare != nil:
				bare(st, mem, stack)
			default:
				stack[0] = wasiBadf
			}
		}})
	}
	return out, nil
}

// stdioFuncs are the file functions of an instance without a file system
// that do more than fail.
var stdioFuncs = map[string]func(st *wasmtimeState, mem engine.Memory, stack []uint64){
	"fd_close":      wasiFdClose,
	"fd_fdstat_get": wasiFdFdstatGet,
	"fd_seek":       wasiFdSeek,
	"fd_write":      wasiFdWrite,
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

// stdioErrno is success for the standard streams, else EBADF.
func stdioErrno(fd uint32) uint64 {
	if fd <= 2 {
		return wasiSuccess
	}
	return wasiBadf
}
