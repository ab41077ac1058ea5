// Package wasmhost runs run_code programs inside the WebAssembly sandbox:
// it compiles the guest (package guest: QuickJS-NG, the C glue and the
// prelude) once per Runtime with its engine (wazero, or wasmtime in builds
// with the wasmtime tag: engine.go), instantiates it fresh for every
// run, implements the host side of the start/resume ABI (docs/abi.md), and
// enforces every limit of a run (Limits) from the host.
//
// A program's nested calls go to a Dispatcher, the small interface the
// executor implements; wasmhost never imports the registry or the executor.
// It imports wazero (and, with the wasmtime tag, wasmtime-go), guest, its
// internal/meter and internal/text.
//
// A Runtime is safe for concurrent use: runs share the compiled guest and
// nothing else.
package wasmhost
