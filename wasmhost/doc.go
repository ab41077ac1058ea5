// Package wasmhost runs run_code programs inside the WebAssembly sandbox:
// it compiles the guest (package guest: QuickJS-NG, the C glue and the
// prelude) once per Runtime with its engine (wazero, or wasmtime in builds
// by scripts/wasmtime.sh: engine.go over internal/engine), instantiates it
// fresh for every
// run, implements the host side of the start/resume ABI (docs/abi.md), and
// enforces every limit of a run (Limits) from the host.
//
// A program's nested calls go to a Dispatcher, the small interface the
// executor implements; wasmhost never imports the registry or the executor.
// It imports wazero, guest, internal/text and its own internal packages:
// the engine seam (internal/engine; the wasmtime adapter, a module of its
// own, is linked by scripts/wasmtime.sh's overlay), the snapshot and session formats (internal/snapshot), the fair
// gate (internal/admit), the ABI's names (internal/abi), the wasm binary
// rewriter (internal/wasmbin) and meter (internal/meter), virtual memory
// (internal/vmem), the world, timers, runners, the bytecode cache and the
// thread CPU clock. None of them imports the root.
//
// A Runtime is safe for concurrent use: runs share the compiled guest and
// nothing else.
package wasmhost
