/*
 * ptcx.h: declarations shared by the guest glue (glue.c, natives.c).
 *
 * The ABI these files implement is documented in docs/abi.md; keep the two in
 * step and bump PTCX_ABI_VERSION (and wasmhost's abiVersion) on any change.
 */
#ifndef PTCX_H
#define PTCX_H

#include <stddef.h>
#include <stdint.h>

#include "cutils.h"
#include "quickjs.h"

#define PTCX_ABI_VERSION 3

/* Statuses returned by ptcx_init, ptcx_start, ptcx_resume and ptcx_timer. */
enum {
    PTCX_DONE = 0,    /* settled with a result (ptcx.result called, or none) */
    PTCX_PENDING = 1, /* waiting for nested calls or timers */
    PTCX_ERROR = 2,   /* failed (ptcx.error called) */
};

/* What the glue asks the prelude's report hook to describe. */
enum {
    PTCX_REPORT_RESULT = 0,      /* the program's promise fulfilled */
    PTCX_REPORT_THROWN = 1,      /* the program's promise rejected */
    PTCX_REPORT_UNHANDLED = 2,   /* a promise rejection nobody handled */
    PTCX_REPORT_SYNTAX = 3,      /* the program did not compile */
    PTCX_REPORT_TIMER = 4,       /* a setTimeout callback threw */
};

/* Refusals of natives.encode: why a value is not plain JSON. */
enum {
    PTCX_REFUSE_UNDEFINED = 1,
    PTCX_REFUSE_FUNCTION = 2,
    PTCX_REFUSE_BIGINT = 3,   /* detail: the BigInt */
    PTCX_REFUSE_SYMBOL = 4,
    PTCX_REFUSE_NUMBER = 5,   /* detail: NaN or an infinity */
    PTCX_REFUSE_CIRCULAR = 6,
    PTCX_REFUSE_DEPTH = 7,
    PTCX_REFUSE_NOT_PLAIN = 8, /* detail: the object */
    PTCX_REFUSE_UNREADABLE = 9, /* detail: what reading it threw */
    PTCX_REFUSE_PROXY = 10,
};

#define PTCX_IMPORT(name) __attribute__((import_module("ptcx"), import_name(name)))
#define PTCX_EXPORT(name) __attribute__((export_name(name)))

/* Host imports (module "ptcx"); see docs/abi.md. */
PTCX_IMPORT("call")
int32_t ptcx_host_call(const char *name, size_t name_len, const char *args, size_t args_len);
PTCX_IMPORT("log")
void ptcx_host_log(int32_t level, const char *text, size_t len);
PTCX_IMPORT("timer_set")
int32_t ptcx_host_timer_set(int32_t delay_ms);
PTCX_IMPORT("timer_clear")
void ptcx_host_timer_clear(int32_t id);
PTCX_IMPORT("result")
void ptcx_host_result(const char *json, size_t len);
PTCX_IMPORT("error")
void ptcx_host_error(const char *json, size_t len);
PTCX_IMPORT("poll")
int32_t ptcx_host_poll(void);

/* promise.inc, appended to quickjs.c by build.sh: a promise that only
 * JS_SettlePromise settles, as its resolving functions would. */
JSValue JS_NewSettleablePromise(JSContext *ctx);
void JS_SettlePromise(JSContext *ctx, JSValueConst promise, JSValueConst value, bool is_reject);

/* scopes.patch, applied to quickjs.c by build.sh: the next direct eval
 * compiles its code in sloppy mode even if its caller is strict (on), or
 * as its caller is (off, the default; a direct eval turns it off). */
void JS_SloppyNextDirectEval(bool on);
/* 1 when the code at input (NUL-terminated) starts with a "use strict"
 * directive as an async function's body would, by the engine's parser. */
int JS_AsyncBodyIsStrict(JSContext *ctx, const char *input, size_t input_len);

/* fast.inc, appended to quickjs.c by build.sh: the plain objects of calls'
 * arguments and results read and made without the general paths. */
int JS_PlainOwnProps(JSContext *ctx, JSValueConst obj, const char **keys, size_t *lens,
                     JSValueConst *values, int max);
int JS_DefineFreshValue(JSContext *ctx, JSValueConst obj, JSAtom atom, JSValue val);
void JS_KeepShapeOf(JSContext *ctx, JSValueConst obj);
/* The kept shape's keys, and an object of it made at once (fast.inc):
 * results of the same keys as the last one skip the per-key steps. */
#define PTCX_KEPT_KEYS 16
int JS_KeptShapeKeys(const char *const **keys, const uint32_t **lens);
JSValue JS_NewKeptShapeObject(JSContext *ctx, JSValue *values);
/* JS_ASCIIBytes: the characters of a string held as ASCII, or NULL. */
const char *JS_ASCIIBytes(JSValueConst v, size_t *len);
/* JS_IsOrdinaryOf: an ordinary object whose prototype is proto or null. */
bool JS_IsOrdinaryOf(JSValueConst v, JSValueConst proto);

/* calls.c */

/* natives.tools(names, refused, bound, byName) -> whether a name has a dot:
 * defines each name's function tools.<name> on byName and (save "then")
 * on bound. Called with args, a tool's function checks and encodes them
 * and registers the call with the host (ptcx.call), and returns the call's
 * promise, all in C. When the arguments are not plain JSON or the host
 * refuses the call, it returns refused(name, r) instead: r is the refusal
 * [code, path, detail] of ptcx_encode, or the host's refusal code (a
 * negative number). */
JSValue ptcx_native_tools(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
/* ptcx_settle_call settles the promise of call id with value (ok) or with
 * make_error(value, toolName) (not ok), taking ownership of value. Unknown
 * ids are ignored. It returns -1 when an exception is pending. */
int ptcx_settle_call(JSContext *ctx, int32_t id, bool ok, JSValue value, JSValueConst make_error);
/* ptcx_forget_calls drops every pending call, never settling it (ptcx_next). */
void ptcx_forget_calls(JSContext *ctx);

/* result.c: ptcx_parse_result parses the len bytes of JSON at json
 * (followed by a NUL), a call's result, as JS_ParseJSON does (and with it,
 * when its fast path gives up). */
JSValue ptcx_parse_result(JSContext *ctx, const char *json, size_t len);

/* encode.c: natives.encode(value, omitUndefined). */
JSValue ptcx_native_encode(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
/* ptcx_encode appends the JSON of v to out, which ptcx_encode_buffer
 * initialised. It returns 0, -1 for a value that is not plain JSON (then
 * *refusal is [code, path, detail]), -2 for a pending exception, -3 when
 * out ran out of memory. */
int ptcx_encode(JSContext *ctx, JSValueConst v, bool omit_undefined, DynBuf *out, JSValue *refusal);
void ptcx_encode_buffer(JSContext *ctx, DynBuf *out);

/* natives.c */

/* ptcx_new_natives returns the object of native functions handed to the
 * prelude (call, log, timerSet, timerClear, result, error, encode). */
JSValue ptcx_new_natives(JSContext *ctx);

/* ptcx_install_random replaces Math.random with a generator that
 * ptcx_reseed_random seeds from the host's random source. */
int ptcx_install_random(JSContext *ctx);
void ptcx_reseed_random(void);
/* ptcx_install_performance replaces the context's performance with one
 * whose origin ptcx_reset_performance moves to now. */
int ptcx_install_performance(JSContext *ctx);
void ptcx_reset_performance(void);

/* The rejection tracker remembers rejected promises that have no handler. */
void ptcx_track_rejection(JSContext *ctx, JSValueConst promise, JSValueConst reason,
                          bool is_handled, void *opaque);
/* ptcx_forget_rejection drops promise from the tracked set, if present. */
void ptcx_forget_rejection(JSContext *ctx, JSValueConst promise);
/* ptcx_first_unhandled returns (a new reference to) the reason of the
 * oldest unhandled rejection, or JS_UNINITIALIZED when there is none. */
JSValue ptcx_first_unhandled(JSContext *ctx);
/* ptcx_forget_rejections drops every tracked rejection (ptcx_next). */
void ptcx_forget_rejections(JSContext *ctx);

/* memory.c */

/* ptcx_malloc_functions allocate the engine's memory within the limit set
 * by ptcx_set_memory_limit (0: none). */
extern const JSMallocFunctions ptcx_malloc_functions;
void ptcx_set_memory_limit(size_t bytes);
/* ptcx_memory_exhausted reports whether an allocation was ever refused. */
bool ptcx_memory_exhausted(void);
/* ptcx_memory_forget clears what ptcx_memory_exhausted reports (ptcx_next). */
void ptcx_memory_forget(void);

#endif
