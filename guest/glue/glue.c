/*
 * glue.c: the exports of the ptcx guest ABI (docs/abi.md) over QuickJS-NG.
 *
 * One instance runs one program. The host calls ptcx_init once, ptcx_start
 * once, then ptcx_resume / ptcx_timer until a status other than
 * PTCX_PENDING comes back. Every export runs the engine's job queue until it
 * is empty before returning, so between exports the instance is quiescent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prelude.h"
#include "ptcx.h"

/* The engine's stack limit, below the 256 KiB wasm stack (build.sh) so that
 * deep recursion raises a clean RangeError instead of overflowing. */
#define PTCX_JS_STACK_SIZE (192 * 1024)

/* The program body is compiled inside this wrapper, on the same line as the
 * body's first line, so line numbers need no adjustment (the prelude
 * adjusts columns on line 1). The outer function's parameter is the
 * program's tools (the prelude's hook "tools"), in a scope around the
 * program's own, which may declare a tools of its own: a plan-bound
 * program has no global tools, so that code made from text, which runs in
 * the global scope, cannot reach them (docs/abi.md, "The program"). The
 * outer function returns before the program starts: it is never on the
 * program's stack. */
static const char wrapper_head[] = "(function(tools){return async function(){";
static const char wrapper_tail[] = "\n}})";

static JSRuntime *rt;
static JSContext *ctx;
static JSValue hook_start, hook_tool_error, hook_fire, hook_report, hook_reset, hook_tools, hook_handle;
static JSValue program = JS_UNDEFINED; /* the promise of the program's body */
static int32_t final_status = -1;      /* set once the program settled */
static size_t memory_limit;            /* the engine's limit, from the config */
/* The program's compiled script, from ptcx_compile or read from the host's
 * bytecode cache (ptcx_load) before ptcx_start, which then evaluates it to
 * the program's function instead of compiling the code of its config. */
static JSValue staged = JS_UNDEFINED;

/* Sessions (docs/abi.md, "Sessions"): consecutive programs share one
 * context, each program's function nested in the scope of the one before,
 * so that its top-level declarations are visible to the programs after it.
 * session_next is the last session program's continuation: a function
 * that evaluates source in that program's scope (a direct eval), or, before
 * the first, one that evaluates it at the global scope. A session program
 * is compiled by it from session_head, the body and session_tail: a
 * function returning [a getter of the program's continuation, the
 * program's async function], which the glue calls itself, so that no frame
 * of the wrapper is on the program's stack. The continuation is set before
 * the body runs, so a program that throws still leaves its declarations
 * (those made before the throw) to the next.
 *
 * The continuations are strict, and the glue has the engine compile what
 * they evaluate in sloppy mode, as a fresh run's program is unless it
 * starts with "use strict" (JS_SloppyNextDirectEval, glue/scopes.patch): a
 * sloppy function that calls eval has a variable object for the vars its
 * eval may declare, and every name a program does not declare itself
 * (Math, JSON, tools) was looked up in the objects of all the
 * continuations before it, each time it was read: a loop reading a global
 * ran 3x slower ten programs into a session, 17x a hundred in. The source
 * a continuation evaluates declares nothing at its top level (it is one
 * function expression) unless a program's body closes the wrapper early,
 * and then what it declares there becomes a global.
 */
static const char session_head[] =
    "(function(){let __ptcx_k;return [()=>__ptcx_k,async function(){__ptcx_k=(__ptcx_s)=>{'use strict';return eval(__ptcx_s)};";
static const char session_tail[] = "\n}];})";
static const char session_base[] = "(__ptcx_s)=>{'use strict';return eval(__ptcx_s)}";
static JSValue session_next = JS_UNDEFINED;

/* empty_object is an empty plain object that lives as long as the context,
 * so that the engine's shape of such objects ({} with Object.prototype)
 * does too: without one alive, every object literal and every object of a
 * call's result made that shape anew and freed it with the object (a
 * malloc, the shape table's insert and removal, and a free: about 460 wasm
 * instructions an object, two per awaited nested call of bench's
 * per_call_await). Programs cannot reach it. */
static JSValue empty_object = JS_UNDEFINED;

/* fail_static reports an error that the prelude cannot describe (it is not
 * loaded, or describing failed, which means memory ran out). */
static int32_t fail_static(const char *json)
{
    ptcx_host_error(json, strlen(json));
    return final_status = PTCX_ERROR;
}

/* fail_exception reports the pending exception, which the prelude cannot
 * describe because it failed to load. */
static int32_t fail_exception(const char *what)
{
    JSValue exc = JS_GetException(ctx);
    JSValue msg = JS_ToString(ctx, exc);
    JS_FreeValue(ctx, exc);
    const char *text = JS_IsException(msg) ? NULL : JS_ToCString(ctx, msg);
    JS_FreeValue(ctx, msg);
    char json[512];
    int n = snprintf(json, sizeof(json), "{\"kind\":\"exception\",\"message\":\"%s: ", what);
    for (const char *p = text ? text : "unknown error"; *p && n < (int)sizeof(json) - 4; p++) {
        if (*p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
            json[n++] = *p;
    }
    json[n++] = '"';
    json[n++] = '}';
    json[n] = 0;
    if (text)
        JS_FreeCString(ctx, text);
    return fail_static(json);
}

static const char out_of_memory_json[] =
    "{\"kind\":\"memory\",\"message\":\"out of memory: the program exceeded its memory limit\"}";

PTCX_EXPORT("ptcx_abi_version")
int32_t ptcx_abi_version(void) { return PTCX_ABI_VERSION; }

/* The exchange buffer: the host writes what it passes to the guest (the
 * prelude's bytecode, the program, tool results) here. */
static char *buffer;
static size_t buffer_cap;

/* ptcx_buffer returns the exchange buffer, grown to at least size bytes,
 * or 0 when memory runs out. It stays valid until the next call. */
PTCX_EXPORT("ptcx_buffer")
char *ptcx_buffer(size_t size)
{
    if (size == 0)
        size = 1;
    if (size > buffer_cap) {
        char *b = realloc(buffer, size);
        if (!b)
            return NULL;
        buffer = b;
        buffer_cap = size;
    }
    return buffer;
}

/* interrupt is QuickJS's interrupt handler, run every few thousand
 * operations: the host answers whether the run must stop (its compute or
 * wall time is up, or it was cancelled). The engine then throws an
 * uncatchable error that unwinds the program. */
static int interrupt(JSRuntime *r, void *opaque) { return ptcx_host_poll() != 0; }

static JSModuleDef *refuse_module(JSContext *c, const char *name, void *opaque)
{
    JS_ThrowReferenceError(c, "cannot import '%s': programs have no modules; use the bound tools", name);
    return NULL;
}

static JSValue get_hook(JSValueConst hooks, const char *name)
{
    JSValue fn = JS_GetPropertyStr(ctx, hooks, name);
    if (!JS_IsFunction(ctx, fn)) {
        JS_FreeValue(ctx, fn);
        return JS_EXCEPTION;
    }
    return fn;
}

static const JSEvalOptions prelude_options = {
    .version = JS_EVAL_OPTIONS_VERSION,
    .eval_flags = JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_STRICT,
    .filename = "<prelude>",
    .line_num = 1,
};

/* load_prelude returns the prelude's outer function, from bytecode when the
 * host has it (reading it is about 25 times faster than compiling), else
 * compiled from the embedded source. */
static JSValue load_prelude(const uint8_t *bytecode, size_t len)
{
    if (!bytecode || len == 0) {
        JSEvalOptions opts = prelude_options;
        return JS_Eval2(ctx, (const char *)ptcx_prelude, ptcx_prelude_len, &opts);
    }
    JSValue fn = JS_ReadObject(ctx, bytecode, len, JS_READ_OBJ_BYTECODE);
    if (JS_IsException(fn))
        return fn;
    return JS_EvalFunction(ctx, fn);
}

/* ptcx_prelude_bytecode compiles the prelude (the engine must be
 * initialised) and returns its bytecode, storing its length at len_out.
 * The host passes it to ptcx_init of later instances of this same module. */
PTCX_EXPORT("ptcx_prelude_bytecode")
uint8_t *ptcx_prelude_bytecode(uint32_t *len_out)
{
    if (!ctx)
        return NULL;
    JSEvalOptions opts = prelude_options;
    opts.eval_flags |= JS_EVAL_FLAG_COMPILE_ONLY;
    JSValue fn = JS_Eval2(ctx, (const char *)ptcx_prelude, ptcx_prelude_len, &opts);
    if (JS_IsException(fn)) {
        JS_FreeValue(ctx, JS_GetException(ctx));
        return NULL;
    }
    size_t len = 0;
    uint8_t *buf = JS_WriteObject(ctx, &len, fn, JS_WRITE_OBJ_BYTECODE | JS_WRITE_OBJ_STRIP_SOURCE);
    JS_FreeValue(ctx, fn);
    if (!buf) {
        JS_FreeValue(ctx, JS_GetException(ctx));
        return NULL;
    }
    *len_out = (uint32_t)len;
    return buf;
}

/* ptcx_init creates the engine and evaluates the prelude, from the len
 * bytes of bytecode at bytecode or, when len is 0, from its source. */
PTCX_EXPORT("ptcx_init")
int32_t ptcx_init(const uint8_t *bytecode, size_t len)
{
    static const char init_failed_json[] =
        "{\"kind\":\"memory\",\"message\":\"the JavaScript engine could not start\"}";
    if (rt)
        return fail_static("{\"kind\":\"exception\",\"message\":\"ptcx_init called twice\"}");
    rt = JS_NewRuntime2(&ptcx_malloc_functions, NULL);
    if (!rt)
        return fail_static(init_failed_json);
    JS_SetMaxStackSize(rt, PTCX_JS_STACK_SIZE);
    JS_SetHostPromiseRejectionTracker(rt, ptcx_track_rejection, NULL);
    JS_SetModuleLoaderFunc(rt, NULL, refuse_module, NULL);
    JS_SetInterruptHandler(rt, interrupt, NULL);
    ctx = JS_NewContext(rt);
    if (!ctx || ptcx_install_random(ctx) || ptcx_install_performance(ctx))
        return fail_static(init_failed_json);
    empty_object = JS_NewObject(ctx);
    if (JS_IsException(empty_object))
        return fail_static(init_failed_json);
    JSValue outer = load_prelude(bytecode, len);
    if (JS_IsException(outer))
        return fail_exception("the prelude failed to load");
    JSValue natives = ptcx_new_natives(ctx);
    if (JS_IsException(natives)) {
        JS_FreeValue(ctx, outer);
        return fail_static(init_failed_json);
    }
    JSValue hooks = JS_Call(ctx, outer, JS_UNDEFINED, 1, (JSValueConst *)&natives);
    JS_FreeValue(ctx, natives);
    JS_FreeValue(ctx, outer);
    if (JS_IsException(hooks))
        return fail_exception("the prelude failed to run");
    hook_start = get_hook(hooks, "start");
    hook_tool_error = get_hook(hooks, "toolError");
    hook_fire = get_hook(hooks, "fire");
    hook_report = get_hook(hooks, "report");
    hook_reset = get_hook(hooks, "reset");
    hook_tools = get_hook(hooks, "tools");
    hook_handle = get_hook(hooks, "handle");
    JS_FreeValue(ctx, hooks);
    if (JS_IsException(hook_start) || JS_IsException(hook_tool_error) ||
        JS_IsException(hook_fire) || JS_IsException(hook_report) || JS_IsException(hook_reset) ||
        JS_IsException(hook_tools) || JS_IsException(hook_handle))
        return fail_static(init_failed_json);
    return PTCX_DONE;
}

/* report asks the prelude to describe an outcome and hand it to the host.
 * The engine's memory limit is lifted meanwhile (the host's page limit still
 * holds), so describing an out-of-memory failure does not itself run out of
 * memory. */
static int32_t report(int what, JSValue value)
{
    /* Whether memory ever ran out: short of memory, the engine throws null
     * or an InternalError with a makeshift message instead of its usual
     * "out of memory" error. */
    JSValue args[3] = {JS_NewInt32(ctx, what), value, JS_NewBool(ctx, ptcx_memory_exhausted())};
    ptcx_set_memory_limit(0);
    JSValue ret = JS_Call(ctx, hook_report, JS_UNDEFINED, 3, (JSValueConst *)args);
    ptcx_set_memory_limit(memory_limit);
    JS_FreeValue(ctx, value);
    int32_t status = PTCX_ERROR;
    if (JS_IsException(ret)) {
        JS_FreeValue(ctx, JS_GetException(ctx));
        return fail_static(out_of_memory_json);
    }
    if (JS_ToInt32(ctx, &status, ret) || (status != PTCX_DONE && status != PTCX_ERROR))
        status = PTCX_ERROR;
    JS_FreeValue(ctx, ret);
    return final_status = status;
}

/* settle runs queued jobs until none is left, then says where the program
 * stands. Jobs only fail for uncatchable reasons (memory). */
static int32_t settle(void)
{
    for (;;) {
        JSContext *c;
        int r = JS_ExecutePendingJob(rt, &c);
        if (r == 0)
            break;
        if (r < 0)
            return report(PTCX_REPORT_THROWN, JS_GetException(ctx));
    }
    JSPromiseStateEnum state = JS_PromiseState(ctx, program);
    if (state == JS_PROMISE_PENDING)
        return PTCX_PENDING;
    if (state == JS_PROMISE_REJECTED)
        return report(PTCX_REPORT_THROWN, JS_PromiseResult(ctx, program));
    JSValue unhandled = ptcx_first_unhandled(ctx);
    if (!JS_IsUninitialized(unhandled))
        return report(PTCX_REPORT_UNHANDLED, unhandled);
    return report(PTCX_REPORT_RESULT, JS_PromiseResult(ctx, program));
}

/* ptcx_stalled is called by the host when the program is pending and the
 * host holds nothing that could resume it: no nested call, no timer. When
 * memory ran out during the program, that is the likely cause (QuickJS
 * drops a promise reaction whose job it cannot allocate, so a chain of
 * microtasks that exhausts memory ends waiting on nothing): the run is
 * reported out of memory. Otherwise it returns pending, and the host
 * reports that the program can never settle. */
PTCX_EXPORT("ptcx_stalled")
int32_t ptcx_stalled(void)
{
    if (final_status >= 0)
        return final_status;
    if (!ctx || !ptcx_memory_exhausted())
        return PTCX_PENDING;
    return report(PTCX_REPORT_THROWN, JS_NULL);
}

static int32_t started(void);
static int start_session(const char *code, size_t len);

/* compile wraps the body in an async function and compiles it: it returns
 * the function, or, with only_bytecode, the bytecode of the script that
 * evaluates to it (JS_EvalFunction), without running anything. */
static JSValue compile(const char *code, size_t len, bool only_bytecode)
{
    size_t head = sizeof(wrapper_head) - 1, tail = sizeof(wrapper_tail) - 1;
    char *src = js_malloc(ctx, head + len + tail + 1);
    if (!src)
        return JS_EXCEPTION;
    memcpy(src, wrapper_head, head);
    memcpy(src + head, code, len);
    memcpy(src + head + len, wrapper_tail, tail + 1);
    JSEvalOptions opts = {
        .version = JS_EVAL_OPTIONS_VERSION,
        .eval_flags = JS_EVAL_TYPE_GLOBAL | (only_bytecode ? JS_EVAL_FLAG_COMPILE_ONLY : 0),
        .filename = "<program>",
        .line_num = 1,
    };
    JSValue fn = JS_Eval2(ctx, src, head + len + tail, &opts);
    js_free(ctx, src);
    return fn;
}

/* ptcx_start runs the program described by the len bytes of JSON config at
 * cfg (followed by a NUL) until it settles or waits. */
PTCX_EXPORT("ptcx_start")
int32_t ptcx_start(const char *cfg, size_t len)
{
    if (final_status >= 0)
        return final_status;
    if (!ctx || !JS_IsUndefined(program))
        return fail_static("{\"kind\":\"exception\",\"message\":\"ptcx_start called out of order\"}");
    JS_UpdateStackTop(rt);
    ptcx_reseed_random();
    JSValue config = JS_ParseJSON(ctx, cfg, len, "<config>");
    if (JS_IsException(config))
        return report(PTCX_REPORT_THROWN, JS_GetException(ctx));

    double limit = 0;
    JSValue v = JS_GetPropertyStr(ctx, config, "memoryLimit");
    if (JS_ToFloat64(ctx, &limit, v) == 0 && limit > 0)
        memory_limit = (size_t)limit;
    JS_FreeValue(ctx, v);
    ptcx_set_memory_limit(memory_limit);
    v = JS_GetPropertyStr(ctx, config, "session");
    bool session = JS_ToBool(ctx, v) == 1;
    JS_FreeValue(ctx, v);

    JSValue code = JS_Call(ctx, hook_start, JS_UNDEFINED, 1, (JSValueConst *)&config);
    JS_FreeValue(ctx, config);
    if (JS_IsException(code))
        return report(PTCX_REPORT_THROWN, JS_GetException(ctx));
    size_t code_len;
    const char *text = JS_ToCStringLen(ctx, &code_len, code);
    JS_FreeValue(ctx, code);
    if (!text)
        return report(PTCX_REPORT_THROWN, JS_GetException(ctx));
    if (session) {
        int what = start_session(text, code_len);
        JS_FreeCString(ctx, text);
        if (what >= 0)
            return report(what, JS_GetException(ctx));
        return started();
    }
    JSValue fn;
    if (JS_IsUndefined(staged)) {
        fn = compile(text, code_len, false);
    } else {
        fn = JS_EvalFunction(ctx, staged); /* frees staged */
        staged = JS_UNDEFINED;
    }
    JS_FreeCString(ctx, text);
    if (JS_IsException(fn))
        return report(PTCX_REPORT_SYNTAX, JS_GetException(ctx));

    JSValue tools = JS_Call(ctx, hook_tools, JS_UNDEFINED, 0, NULL);
    if (JS_IsException(tools)) {
        JS_FreeValue(ctx, fn);
        return report(PTCX_REPORT_THROWN, JS_GetException(ctx));
    }
    JSValue body = JS_Call(ctx, fn, JS_UNDEFINED, 1, (JSValueConst *)&tools);
    JS_FreeValue(ctx, tools);
    JS_FreeValue(ctx, fn);
    if (JS_IsException(body))
        return report(PTCX_REPORT_THROWN, JS_GetException(ctx));
    program = JS_Call(ctx, body, JS_UNDEFINED, 0, NULL);
    JS_FreeValue(ctx, body);
    if (JS_IsException(program)) {
        /* The body escaped its wrapper and is not a function. */
        program = JS_UNDEFINED;
        return report(PTCX_REPORT_THROWN, JS_GetException(ctx));
    }
    return started();
}

/* started settles the program just started, whose promise is program. */
static int32_t started(void)
{
    if (JS_PromiseState(ctx, program) == JS_PROMISE_NOT_A_PROMISE) {
        JSValue value = program;
        program = JS_NULL;
        return report(PTCX_REPORT_RESULT, value);
    }
    /* The body's own promise is observed here, not by a handler: a rejection
     * of it is the program's failure, not an unhandled rejection. */
    ptcx_forget_rejection(ctx, program);
    return settle();
}

/* start_session compiles the session program code (NUL-terminated) in the
 * scope of the last one and starts it, setting program to its promise and
 * session_next to its continuation. It returns -1 when it started, else the report code
 * of the pending exception (PTCX_REPORT_SYNTAX: it did not compile). */
static int start_session(const char *code, size_t len)
{
    if (JS_IsUndefined(session_next)) {
        JSEvalOptions opts = {
            .version = JS_EVAL_OPTIONS_VERSION,
            .eval_flags = JS_EVAL_TYPE_GLOBAL,
            .filename = "<session>",
            .line_num = 1,
        };
        session_next = JS_Eval2(ctx, session_base, sizeof(session_base) - 1, &opts);
        if (JS_IsException(session_next)) {
            session_next = JS_UNDEFINED;
            return PTCX_REPORT_THROWN;
        }
    }
    size_t head = sizeof(session_head) - 1, tail = sizeof(session_tail) - 1;
    char *src = js_malloc(ctx, head + len + tail + 1);
    if (!src)
        return PTCX_REPORT_THROWN;
    memcpy(src, session_head, head);
    memcpy(src + head, code, len);
    memcpy(src + head + len, session_tail, tail + 1);
    JSValue source = JS_NewStringLen(ctx, src, head + len + tail);
    js_free(ctx, src);
    if (JS_IsException(source))
        return PTCX_REPORT_THROWN;
    /* A body that starts with "use strict" is strict, as in a fresh run,
     * where it starts its function's body; here the continuation's
     * assignment comes first, so the engine is asked, and the code is then
     * compiled as strict as the continuation. */
    JS_SloppyNextDirectEval(!JS_AsyncBodyIsStrict(ctx, code, len));
    /* Evaluating the function expression runs nothing of the program
     * (unless its body escapes the wrapper, which then fails as not a
     * function): an exception here is a compile error. */
    JSValue outer = JS_Call(ctx, session_next, JS_UNDEFINED, 1, (JSValueConst *)&source);
    JS_SloppyNextDirectEval(false);
    JS_FreeValue(ctx, source);
    if (JS_IsException(outer))
        return PTCX_REPORT_SYNTAX;
    JSValue pair = JS_Call(ctx, outer, JS_UNDEFINED, 0, NULL);
    JS_FreeValue(ctx, outer);
    if (JS_IsException(pair))
        return PTCX_REPORT_THROWN;
    JSValue getter = JS_GetPropertyUint32(ctx, pair, 0);
    JSValue fn = JS_IsException(getter) ? JS_EXCEPTION : JS_GetPropertyUint32(ctx, pair, 1);
    JS_FreeValue(ctx, pair);
    if (JS_IsException(fn)) {
        JS_FreeValue(ctx, getter);
        return PTCX_REPORT_THROWN;
    }
    JSValue promise = JS_Call(ctx, fn, JS_UNDEFINED, 0, NULL);
    JS_FreeValue(ctx, fn);
    if (JS_IsException(promise)) {
        JS_FreeValue(ctx, getter);
        return PTCX_REPORT_THROWN;
    }
    JSValue next = JS_Call(ctx, getter, JS_UNDEFINED, 0, NULL);
    JS_FreeValue(ctx, getter);
    if (JS_IsException(next)) {
        JS_FreeValue(ctx, promise);
        return PTCX_REPORT_THROWN;
    }
    if (JS_IsFunction(ctx, next)) {
        JS_FreeValue(ctx, session_next);
        session_next = next;
    } else {
        JS_FreeValue(ctx, next);
    }
    program = promise;
    return -1;
}

/* ptcx_next readies an instance whose program ended for the next program
 * of its session: the last program, its staged script, its pending calls,
 * timers and unhandled rejections are forgotten (a call still pending is
 * never settled), and what ptcx_restored reseeds is reseeded from the
 * instance's world, which the host has set for the next run. The context,
 * its globals and the session's scopes stay. */
PTCX_EXPORT("ptcx_next")
int32_t ptcx_next(void)
{
    if (!ctx)
        return PTCX_ERROR;
    JS_UpdateStackTop(rt);
    ptcx_set_memory_limit(0);
    JS_FreeValue(ctx, program);
    program = JS_UNDEFINED;
    JS_FreeValue(ctx, staged);
    staged = JS_UNDEFINED;
    final_status = -1;
    ptcx_forget_calls(ctx);
    ptcx_forget_rejections(ctx);
    ptcx_memory_forget();
    JSValue ret = JS_Call(ctx, hook_reset, JS_UNDEFINED, 0, NULL);
    if (JS_IsException(ret)) {
        JS_FreeValue(ctx, JS_GetException(ctx));
        return PTCX_ERROR;
    }
    JS_FreeValue(ctx, ret);
    /* A program may have made performance non-configurable: the old one
     * then stays, its origin moved all the same (the context's, or the
     * glue's for the one ptcx_init made). */
    JS_AddPerformance(ctx);
    ptcx_reset_performance();
    if (JS_HasException(ctx))
        JS_FreeValue(ctx, JS_GetException(ctx));
    ptcx_reseed_random();
    return PTCX_DONE;
}

/* ptcx_resume settles the promise of nested call id. The len bytes at
 * payload (followed by a NUL) are the result's JSON when ok is 1, the
 * envelope of a handle when ok is 2 (the prelude's hook handle makes the
 * Handle object the promise resolves with), or the failure message when ok
 * is 0. */
PTCX_EXPORT("ptcx_resume")
int32_t ptcx_resume(int32_t id, int32_t ok, const char *payload, size_t len)
{
    if (final_status >= 0 || !JS_IsObject(program))
        return final_status >= 0 ? final_status : fail_static("{\"kind\":\"exception\",\"message\":\"ptcx_resume called before ptcx_start\"}");
    JS_UpdateStackTop(rt);
    JSValue value;
    int32_t settled_ok = ok;
    if (!ok) {
        value = JS_NewStringLen(ctx, payload ? payload : "", payload ? len : 0);
    } else if (!payload || len == 0) {
        value = JS_NULL;
    } else {
        value = ptcx_parse_result(ctx, payload, len);
        if (JS_IsException(value)) {
            JS_FreeValue(ctx, JS_GetException(ctx));
            value = JS_NewString(ctx, "the tool returned a value that is not valid JSON");
            settled_ok = 0;
        } else if (ok == 2) {
            JSValue handle = JS_Call(ctx, hook_handle, JS_UNDEFINED, 1, (JSValueConst *)&value);
            JS_FreeValue(ctx, value);
            value = handle;
            settled_ok = 1;
        }
    }
    if (JS_IsException(value))
        return report(PTCX_REPORT_THROWN, JS_GetException(ctx));
    if (ptcx_settle_call(ctx, id, settled_ok, value, hook_tool_error))
        return report(PTCX_REPORT_THROWN, JS_GetException(ctx));
    return settle();
}

/* ptcx_timer runs the callback of timer id. */
PTCX_EXPORT("ptcx_timer")
int32_t ptcx_timer(int32_t id)
{
    if (final_status >= 0 || !JS_IsObject(program))
        return final_status >= 0 ? final_status : fail_static("{\"kind\":\"exception\",\"message\":\"ptcx_timer called before ptcx_start\"}");
    JS_UpdateStackTop(rt);
    JSValue arg = JS_NewInt32(ctx, id);
    JSValue ret = JS_Call(ctx, hook_fire, JS_UNDEFINED, 1, (JSValueConst *)&arg);
    if (JS_IsException(ret))
        return report(PTCX_REPORT_TIMER, JS_GetException(ctx));
    JS_FreeValue(ctx, ret);
    return settle();
}

/* ptcx_restored is called once on an instance restored from the host's
 * initialised image, before anything else: it reseeds what was fixed when
 * the image was made (the origin of performance.now and
 * performance.timeOrigin, and Math.random) from this instance's clock and
 * random source. Both are statics of the glue: reseeding allocates nothing
 * and writes no page of the engine's heap, which the instance shares with
 * the image until it writes it. */
PTCX_EXPORT("ptcx_restored")
int32_t ptcx_restored(void)
{
    if (!ctx || !JS_IsUndefined(program) || final_status >= 0)
        return PTCX_ERROR;
    ptcx_reset_performance();
    ptcx_reseed_random();
    return PTCX_DONE;
}

/* ptcx_compile compiles the len bytes of program code at code (followed by a
 * NUL) as ptcx_start would, with the engine's memory limit set to
 * memory_limit_bytes, and keeps the compiled script for ptcx_start, which
 * evaluates it to the program's function. It returns the script's bytecode
 * as a 4-byte little-endian length followed by the bytes, or 0 when the
 * code does not compile (ptcx_start then reports why) or memory runs out.
 * No program code runs: not even code that escapes the wrapper, which runs
 * when ptcx_start evaluates the script. */
PTCX_EXPORT("ptcx_compile")
uint8_t *ptcx_compile(const char *code, size_t len, size_t memory_limit_bytes)
{
    if (!ctx || !JS_IsUndefined(program) || !JS_IsUndefined(staged))
        return NULL;
    JS_UpdateStackTop(rt);
    memory_limit = memory_limit_bytes;
    ptcx_set_memory_limit(memory_limit);
    JSValue fn = compile(code, len, true);
    if (JS_IsException(fn)) {
        JS_FreeValue(ctx, JS_GetException(ctx));
        return NULL;
    }
    size_t n = 0;
    uint8_t *bc = JS_WriteObject(ctx, &n, fn, JS_WRITE_OBJ_BYTECODE);
    if (!bc || n > UINT32_MAX - 4) {
        JS_FreeValue(ctx, fn);
        JS_FreeValue(ctx, JS_GetException(ctx));
        return NULL;
    }
    uint8_t *out = js_malloc(ctx, n + 4);
    if (!out) {
        js_free(ctx, bc);
        JS_FreeValue(ctx, fn);
        JS_FreeValue(ctx, JS_GetException(ctx));
        return NULL;
    }
    uint32_t n32 = (uint32_t)n;
    memcpy(out, &n32, 4);
    memcpy(out + 4, bc, n);
    js_free(ctx, bc);
    staged = fn;
    return out;
}

/* ptcx_load reads the len bytes of bytecode at bc, which ptcx_compile of an
 * instance of this same module produced for the same code, and keeps the
 * script for ptcx_start. The host passes only bytecode it cached itself,
 * never bytes from a program. It returns PTCX_DONE, or PTCX_ERROR when the
 * bytecode cannot be read (the host then compiles the code instead). */
PTCX_EXPORT("ptcx_load")
int32_t ptcx_load(const uint8_t *bc, size_t len, size_t memory_limit_bytes)
{
    if (!ctx || !JS_IsUndefined(program) || !JS_IsUndefined(staged))
        return PTCX_ERROR;
    JS_UpdateStackTop(rt);
    memory_limit = memory_limit_bytes;
    ptcx_set_memory_limit(memory_limit);
    JSValue fn = JS_ReadObject(ctx, bc, len, JS_READ_OBJ_BYTECODE);
    if (JS_IsException(fn)) {
        JS_FreeValue(ctx, JS_GetException(ctx));
        return PTCX_ERROR;
    }
    staged = fn;
    return PTCX_DONE;
}
