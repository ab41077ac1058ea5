/*
 * calls.c: nested calls. natives.call registers a call with the host and
 * returns its promise; ptcx_settle_call settles it when the host resumes the
 * guest with the call's outcome. The promises' resolving functions live here,
 * in a hash table keyed by call id, so that resolving a call runs no
 * JavaScript but the program's own continuation.
 */
#include "ptcx.h"

typedef struct {
    int32_t id; /* 0: empty; -1: removed (tombstone) */
    JSValue resolve, reject, tool;
} pending_call;

static pending_call *calls;
static size_t calls_cap; /* a power of two, or 0 */
static size_t calls_live, calls_used;

static pending_call *find_call(int32_t id)
{
    size_t mask = calls_cap - 1, i = ((uint32_t)id * 2654435761u) & mask;
    pending_call *insert_at = NULL;
    for (;; i = (i + 1) & mask) {
        pending_call *c = &calls[i];
        if (c->id == 0)
            return insert_at ? insert_at : c;
        if (c->id == -1) {
            if (!insert_at)
                insert_at = c;
        } else if (c->id == id) {
            return c;
        }
    }
}

static int grow_calls(JSContext *ctx)
{
    size_t cap = calls_cap && calls_live * 4 < calls_cap ? calls_cap : (calls_cap ? calls_cap * 2 : 64);
    pending_call *old = calls;
    size_t old_cap = calls_cap;
    pending_call *fresh = js_mallocz(ctx, cap * sizeof(pending_call));
    if (!fresh)
        return -1;
    calls = fresh;
    calls_cap = cap;
    calls_used = calls_live;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].id > 0)
            *find_call(old[i].id) = old[i];
    }
    js_free(ctx, old);
    return 0;
}

/* natives.call(name, argsJSON) -> the call's promise, or the host's refusal
 * code (a negative number). */
JSValue ptcx_native_call(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    if ((calls_used + 1) * 2 > calls_cap && grow_calls(ctx))
        return JS_EXCEPTION;
    size_t name_len, args_len;
    const char *name = JS_ToCStringLen(ctx, &name_len, argv[0]);
    if (!name)
        return JS_EXCEPTION;
    const char *args = JS_ToCStringLen(ctx, &args_len, argv[1]);
    if (!args) {
        JS_FreeCString(ctx, name);
        return JS_EXCEPTION;
    }
    int32_t id = ptcx_host_call(name, name_len, args, args_len);
    JS_FreeCString(ctx, args);
    JS_FreeCString(ctx, name);
    if (id <= 0)
        return JS_NewInt32(ctx, id);

    JSValue funcs[2];
    JSValue promise = JS_NewPromiseCapability(ctx, funcs);
    if (JS_IsException(promise))
        return promise;
    pending_call *c = find_call(id);
    if (c->id == 0)
        calls_used++;
    *c = (pending_call){.id = id, .resolve = funcs[0], .reject = funcs[1], .tool = JS_DupValue(ctx, argv[0])};
    calls_live++;
    return promise;
}

int ptcx_settle_call(JSContext *ctx, int32_t id, bool ok, JSValue value, JSValueConst make_error)
{
    if (id <= 0 || calls_live == 0) {
        JS_FreeValue(ctx, value);
        return 0;
    }
    pending_call *slot = find_call(id);
    if (slot->id != id) {
        JS_FreeValue(ctx, value);
        return 0; /* unknown or settled already: ignored */
    }
    pending_call c = *slot;
    slot->id = -1;
    calls_live--;
    int ret = 0;
    if (!ok) {
        /* The prelude makes the ToolCallError(message, toolName). */
        JSValue args[2] = {value, c.tool};
        JSValue err = JS_Call(ctx, make_error, JS_UNDEFINED, 2, (JSValueConst *)args);
        JS_FreeValue(ctx, value);
        value = err;
    }
    if (JS_IsException(value)) {
        ret = -1;
    } else {
        JSValue r = JS_Call(ctx, ok ? c.resolve : c.reject, JS_UNDEFINED, 1, (JSValueConst *)&value);
        if (JS_IsException(r))
            ret = -1;
        JS_FreeValue(ctx, r);
        JS_FreeValue(ctx, value);
    }
    JS_FreeValue(ctx, c.resolve);
    JS_FreeValue(ctx, c.reject);
    JS_FreeValue(ctx, c.tool);
    return ret;
}

void ptcx_forget_calls(JSContext *ctx)
{
    for (size_t i = 0; i < calls_cap; i++) {
        pending_call *c = &calls[i];
        if (c->id > 0) {
            JS_FreeValue(ctx, c->resolve);
            JS_FreeValue(ctx, c->reject);
            JS_FreeValue(ctx, c->tool);
        }
        c->id = 0;
    }
    calls_live = calls_used = 0;
}
