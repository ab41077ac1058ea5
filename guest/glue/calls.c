/*
 * calls.c: nested calls. A tool's function (natives.tools) checks and encodes
 * its arguments, registers the call with the host and returns its promise,
 * in C; ptcx_settle_call settles it when the host resumes the guest with
 * the call's outcome. The promises live here, in a hash table keyed by call
 * id, and are settled without resolving functions (promise.inc), so that
 * settling a call runs no JavaScript but the program's own continuation.
 */
#include <string.h>

#include "ptcx.h"

typedef struct {
    int32_t id; /* 0: empty; -1: removed (tombstone) */
    JSValue promise, tool;
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

/* remove_call empties slot, a settled call's. A slot followed by an
 * empty one becomes empty itself, and so do the tombstones just before
 * it: no probe goes past an empty slot, so none needed them. Otherwise it
 * becomes a tombstone. Without this, a run that awaits one call after
 * another would leave a tombstone per call and rebuild the table every
 * few dozen calls. */
static void remove_call(pending_call *slot)
{
    size_t mask = calls_cap - 1, i = (size_t)(slot - calls);
    if (calls[(i + 1) & mask].id != 0) {
        slot->id = -1;
        return;
    }
    do {
        calls[i].id = 0;
        calls_used--;
        i = (i - 1) & mask;
    } while (calls[i].id == -1);
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

/* The arguments of the call being made, encoded: one buffer kept from one
 * call to the next, so that a small call allocates nothing for them; it is
 * released after a call whose arguments grew it past KEEP_ARGS bytes. A
 * call made while another's arguments are encoded (from a getter) encodes
 * into a buffer of its own. */
static DynBuf args_buf;
static bool args_ready, args_busy;
#define KEEP_ARGS (64 * 1024)

/* register_call registers a call of the tool named data[0] with the
 * arguments in out and returns its promise; a refusal of the host is
 * returned as its code, in *code. */
static JSValue register_call(JSContext *ctx, JSValueConst *data, DynBuf *out, int32_t *code)
{
    size_t name_len;
    const char *ascii = JS_ASCIIBytes(data[0], &name_len);
    const char *name = ascii ? ascii : JS_ToCStringLen(ctx, &name_len, data[0]);
    if (!name)
        return JS_EXCEPTION;
    int32_t id = ptcx_host_call(name, name_len, (const char *)out->buf, out->size);
    if (!ascii)
        JS_FreeCString(ctx, name);
    if (id <= 0) {
        *code = id;
        return JS_UNDEFINED;
    }
    JSValue promise = JS_NewSettleablePromise(ctx);
    if (JS_IsException(promise))
        return promise;
    pending_call *c = find_call(id);
    if (c->id == 0)
        calls_used++;
    *c = (pending_call){.id = id, .promise = JS_DupValue(ctx, promise), .tool = JS_DupValue(ctx, data[0])};
    calls_live++;
    return promise;
}

/* tool_call is tools.<name>(args); data is [name, refused] (ptcx.h). */
static JSValue tool_call(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic,
                         JSValueConst *data)
{
    if ((calls_used + 1) * 2 > calls_cap && grow_calls(ctx))
        return JS_EXCEPTION;
    DynBuf own, *out = &args_buf;
    if (args_busy) {
        ptcx_encode_buffer(ctx, &own);
        out = &own;
    } else {
        if (!args_ready)
            ptcx_encode_buffer(ctx, &args_buf);
        args_ready = args_busy = true;
        args_buf.size = 0;
        args_buf.error = false;
    }
    JSValue why = JS_UNDEFINED;
    int r = 0;
    if (argc == 0 || JS_IsUndefined(argv[0]))
        dbuf_putstr(out, "{}");
    else
        r = ptcx_encode(ctx, argv[0], true, out, &why);
    if (r == 0 && out->error)
        r = -3;
    int32_t code = 0;
    JSValue ret = r == 0 ? register_call(ctx, data, out, &code) : JS_UNDEFINED;
    if (out == &own) {
        dbuf_free(&own);
    } else {
        args_busy = false;
        if (args_buf.allocated_size > KEEP_ARGS) {
            dbuf_free(&args_buf);
            args_ready = false;
        }
    }
    switch (r) {
    case 0:
        if (code == 0)
            return ret;
        why = JS_NewInt32(ctx, code);
        break;
    case -1:
        break;
    case -2:
        return JS_EXCEPTION;
    default:
        return JS_ThrowOutOfMemory(ctx);
    }
    /* The arguments go to the hook too: ones that hold a handle are
     * passed again with the handle's marker in its place (prelude.js). */
    JSValue args[3] = {data[0], why, argc > 0 ? argv[0] : JS_UNDEFINED};
    ret = JS_Call(ctx, data[1], JS_UNDEFINED, 3, (JSValueConst *)args);
    JS_FreeValue(ctx, why);
    return ret;
}

/* make_tool returns tools.<name>: a function named name, frozen, whose
 * data is [name, refused]. */
static JSValue make_tool(JSContext *ctx, JSValueConst name, JSValueConst refused)
{
    JSValueConst data[2] = {name, refused};
    JSValue f = JS_NewCFunctionData(ctx, tool_call, 1, 0, 2, data);
    if (JS_IsException(f))
        return f;
    if (JS_DefinePropertyValueStr(ctx, f, "name", JS_DupValue(ctx, name), JS_PROP_CONFIGURABLE) < 0 ||
        JS_FreezeObject(ctx, f) < 0) {
        JS_FreeValue(ctx, f);
        return JS_EXCEPTION;
    }
    return f;
}

/* natives.tools(names, refused, bound, byName) -> whether a name has a dot.
 * For each name of the array names (each made a string), it defines the
 * name's function (make_tool) on byName as a plain property and, unless the
 * name is "then", on bound as an enumerable, read-only, non-configurable
 * one: what the prelude's loop did with defineProperty and freeze, without
 * a descriptor object and a call of the engine per property. A name given
 * twice throws, as redefining a read-only property does. */
JSValue ptcx_native_tools(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    if (argc < 4 || !JS_IsArray(argv[0]) || !JS_IsFunction(ctx, argv[1]) || !JS_IsObject(argv[2]) ||
        !JS_IsObject(argv[3]))
        return JS_ThrowTypeError(ctx, "natives.tools(names, refused, bound, byName)");
    int64_t n;
    if (JS_GetLength(ctx, argv[0], &n) < 0)
        return JS_EXCEPTION;
    bool dotted = false;
    for (int64_t i = 0; i < n; i++) {
        JSValue v = JS_GetPropertyInt64(ctx, argv[0], i);
        if (JS_IsException(v))
            return JS_EXCEPTION;
        JSValue name = JS_ToString(ctx, v);
        JS_FreeValue(ctx, v);
        if (JS_IsException(name))
            return JS_EXCEPTION;
        size_t len;
        const char *s = JS_ToCStringLen(ctx, &len, name);
        if (!s) {
            JS_FreeValue(ctx, name);
            return JS_EXCEPTION;
        }
        bool then = len == 4 && memcmp(s, "then", 4) == 0;
        dotted = dotted || memchr(s, '.', len) != NULL;
        JSAtom atom = JS_NewAtomLen(ctx, s, len);
        JS_FreeCString(ctx, s);
        if (atom == JS_ATOM_NULL) {
            JS_FreeValue(ctx, name);
            return JS_EXCEPTION;
        }
        JSValue f = make_tool(ctx, name, argv[1]);
        JS_FreeValue(ctx, name);
        int r = JS_IsException(f) ? -1 : 0;
        if (r == 0)
            r = JS_DefinePropertyValue(ctx, argv[3], atom, JS_DupValue(ctx, f), JS_PROP_C_W_E | JS_PROP_THROW);
        if (r >= 0 && !then)
            r = JS_DefinePropertyValue(ctx, argv[2], atom, JS_DupValue(ctx, f), JS_PROP_ENUMERABLE | JS_PROP_THROW);
        JS_FreeValue(ctx, f);
        JS_FreeAtom(ctx, atom);
        if (r < 0)
            return JS_EXCEPTION;
    }
    return JS_NewBool(ctx, dotted);
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
    remove_call(slot);
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
        JS_SettlePromise(ctx, c.promise, value, !ok);
        JS_FreeValue(ctx, value);
    }
    JS_FreeValue(ctx, c.promise);
    JS_FreeValue(ctx, c.tool);
    return ret;
}

void ptcx_forget_calls(JSContext *ctx)
{
    for (size_t i = 0; i < calls_cap; i++) {
        pending_call *c = &calls[i];
        if (c->id > 0) {
            JS_FreeValue(ctx, c->promise);
            JS_FreeValue(ctx, c->tool);
        }
        c->id = 0;
    }
    calls_live = calls_used = 0;
}
