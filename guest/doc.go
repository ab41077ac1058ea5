// Package guest holds what runs inside the WebAssembly sandbox: QuickJS-NG
// compiled for wasm32-wasi, the C glue that exposes the ptcx host ABI
// (glue.c, natives.c, ptcx.h; documented in docs/abi.md) and the JavaScript
// prelude that gives programs tools, ToolCallError, console, setTimeout and
// clearTimeout (prelude.js).
//
// Two changes make JavaScript's % fast where it leaves int32: glue/fmod.c
// takes the remainder of integers up to 2^53 in one i64.rem_s, in front of
// the C library's fmod (the linker routes every fmod there), and build.sh
// patches QuickJS's interpreter to call fmod inline when an operand is a
// double (inline_float_mod). wasmhost/jsmath_test.go checks % against Go's
// math.Mod on both engines.
//
// An awaited nested call is cheaper by more changes to the engine
// (docs/performance-notebook.md, "The guest's await" and "The awaited call, third
// pass"): glue/promise.inc (a call's promise made of a kept shape and
// settled without resolving functions), glue/await.patch (an async
// function's awaits share one pair of resolving functions),
// glue/reactions.patch (a run job entry and reaction records kept for the
// next ones; PromiseResolve reads a plain promise's constructor directly),
// glue/fields.patch (an object literal's new fields added directly) and
// glue/fast.inc (plain arguments and results read and made without the
// general paths, a result of the last one's keys made of its shape).
//
// Sessions need glue/scopes.patch (build.sh stops without it): a session's
// continuations are strict and compile the programs' text as sloppy code
// (JS_SloppyNextDirectEval) unless it starts with "use strict"
// (JS_AsyncBodyIsStrict), so that no name a program reads is looked up in a
// variable object per earlier program; and a function calling a direct
// eval closes over each name of its enclosing functions once
// (docs/abi.md, "Sessions"). glue/regexp.patch has a regular expression
// that does not compile report where it is, as any other syntax error does.
//
// The module is built by build.sh (`make guest`) from pinned QuickJS-NG
// sources into wasm/guest.wasm, which this package embeds (Wasm). It is a
// build output and is not committed, and the module builds without it: a
// plain clone or a module download embeds no guest, Wasm returns nil and
// wasmhost.New fails with wasmhost.ErrNoGuest, which says to run `make
// guest` (then rebuild) or to give the guest at run time, with
// wasmhost.Config.WithGuest or the PTCX_GUEST environment variable (the path
// of a guest.wasm). Tests that need the guest skip without it, saying so,
// except in CI and under `make test` (internal/testkit.RequireGuest).
//
// The package imports nothing; wasmhost compiles and instantiates the module.
package guest
