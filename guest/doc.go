// Package guest holds what runs inside the WebAssembly sandbox: QuickJS-NG
// compiled for wasm32-wasi, the C glue that exposes the ptcx host ABI
// (glue.c, natives.c, ptcx.h; documented in docs/abi.md) and the JavaScript
// prelude that gives programs tools, ToolCallError, console, setTimeout and
// clearTimeout (prelude.js).
//
// The module is built by build.sh (`make guest`) from pinned QuickJS-NG
// sources into guest.wasm, which this package embeds. guest.wasm is a build
// output and is not committed: if `go build` reports
//
//	pattern guest.wasm: no matching files found
//
// run `make guest` first.
//
// The package imports nothing; wasmhost compiles and instantiates the module.
package guest
