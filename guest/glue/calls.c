/*
 * calls.c: nested calls. A tool's function (natives.tool) checks and encodes
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
    const char *name = JS_ToCStringLen(ctx, &name_len, data[0]);
    if (!name)
        return JS_EXCEPTION;
    int32_t id = ptcx_host_call(name, name_len, (const char *)out->buf, out->size);
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
    JSValue args[2] = {data[0], why};
    ret = JS_Call(ctx, data[1], JS_UNDEFINED, 2, (JSValueConst *)args);
    JS_FreeValue(ctx, why);
    return ret;
}

/* natives.tool(name, refused) -> tools.<name> */
JSValue ptcx_native_tool(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    if (!JS_IsString(argv[0]) || !JS_IsFunction(ctx, argv[1]))
        return JS_ThrowTypeError(ctx, "natives.tool(name, refused)");
    return JS_NewCFunctionData(ctx, tool_call, 1, 0, 2, argv);
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

/*
 * The JSON of a call's result, parsed. Most results are small objects of
 * ASCII keys, integers and ASCII strings: parsing them here costs a third
 * of what JS_ParseJSON does. Anything else (a fraction, an exponent, an
 * integer past int32 or -0, an escape or a non-ASCII byte in a string,
 * nesting past FAST_DEPTH, a syntax error) makes the fast path give up,
 * and the whole text is parsed by JS_ParseJSON, so the value and the
 * errors are always JS_ParseJSON's.
 */
#define FAST_DEPTH 32

typedef struct {
    JSContext *ctx;
    const char *p, *end;
    int depth;
} fast_parser;

static const JSValue give_up = JS_UNINITIALIZED;

static void skip_space(fast_parser *f)
{
    while (f->p < f->end && (*f->p == ' ' || *f->p == '\n' || *f->p == '\r' || *f->p == '\t'))
        f->p++;
}

/* fast_string reads a string of printable ASCII without escapes, after its
 * opening quote, and returns its bytes, or NULL to give up. */
static const char *fast_string(fast_parser *f, size_t *len)
{
    const char *s = f->p;
    while (f->p < f->end) {
        unsigned char c = (unsigned char)*f->p;
        if (c == '"') {
            *len = (size_t)(f->p - s);
            f->p++;
            return s;
        }
        if (c == '\\' || c < 0x20 || c >= 0x80)
            return NULL;
        f->p++;
    }
    return NULL;
}

static JSValue fast_value(fast_parser *f);

static JSValue fast_array(fast_parser *f)
{
    JSValue arr = JS_NewArray(f->ctx);
    if (JS_IsException(arr))
        return give_up;
    skip_space(f);
    if (f->p < f->end && *f->p == ']') {
        f->p++;
        return arr;
    }
    for (uint32_t i = 0;; i++) {
        JSValue v = fast_value(f);
        if (JS_IsUninitialized(v) || JS_DefinePropertyValueUint32(f->ctx, arr, i, v, JS_PROP_C_W_E) < 0)
            break;
        skip_space(f);
        if (f->p < f->end && *f->p == ',') {
            f->p++;
            continue;
        }
        if (f->p < f->end && *f->p == ']') {
            f->p++;
            return arr;
        }
        break;
    }
    JS_FreeValue(f->ctx, arr);
    return give_up;
}

static JSValue fast_object(fast_parser *f)
{
    JSValue obj = JS_NewObject(f->ctx);
    if (JS_IsException(obj))
        return give_up;
    skip_space(f);
    if (f->p < f->end && *f->p == '}') {
        f->p++;
        return obj;
    }
    for (;;) {
        skip_space(f);
        if (f->p >= f->end || *f->p != '"')
            break;
        f->p++;
        size_t len;
        const char *key = fast_string(f, &len);
        if (!key)
            break;
        skip_space(f);
        if (f->p >= f->end || *f->p != ':')
            break;
        f->p++;
        JSValue v = fast_value(f);
        if (JS_IsUninitialized(v))
            break;
        JSAtom atom = JS_NewAtomLen(f->ctx, key, len);
        if (atom == JS_ATOM_NULL) {
            JS_FreeValue(f->ctx, v);
            break;
        }
        int r = JS_DefinePropertyValue(f->ctx, obj, atom, v, JS_PROP_C_W_E);
        JS_FreeAtom(f->ctx, atom);
        if (r < 0)
            break;
        skip_space(f);
        if (f->p < f->end && *f->p == ',') {
            f->p++;
            continue;
        }
        if (f->p < f->end && *f->p == '}') {
            f->p++;
            return obj;
        }
        break;
    }
    JS_FreeValue(f->ctx, obj);
    return give_up;
}

/* fast_int reads an integer that fits an int32 (not -0), or gives up. */
static JSValue fast_int(fast_parser *f)
{
    bool neg = *f->p == '-';
    if (neg)
        f->p++;
    if (f->p >= f->end || *f->p < '0' || *f->p > '9')
        return give_up;
    int64_t n = 0;
    if (*f->p == '0') {
        f->p++;
    } else {
        while (f->p < f->end && *f->p >= '0' && *f->p <= '9' && n <= INT32_MAX) {
            n = n * 10 + (*f->p - '0');
            f->p++;
        }
    }
    if (f->p < f->end && ((*f->p >= '0' && *f->p <= '9') || *f->p == '.' || *f->p == 'e' || *f->p == 'E'))
        return give_up;
    if (neg)
        n = -n;
    if (n > INT32_MAX || n < INT32_MIN || (neg && n == 0))
        return give_up;
    return JS_NewInt32(f->ctx, (int32_t)n);
}

static bool fast_word(fast_parser *f, const char *w, size_t len)
{
    if ((size_t)(f->end - f->p) < len || memcmp(f->p, w, len) != 0)
        return false;
    f->p += len;
    return true;
}

static JSValue fast_value(fast_parser *f)
{
    skip_space(f);
    if (f->p >= f->end)
        return give_up;
    switch (*f->p) {
    case '{':
    case '[': {
        if (f->depth >= FAST_DEPTH)
            return give_up;
        bool obj = *f->p++ == '{';
        f->depth++;
        JSValue v = obj ? fast_object(f) : fast_array(f);
        f->depth--;
        return v;
    }
    case '"': {
        f->p++;
        size_t len;
        const char *s = fast_string(f, &len);
        if (!s)
            return give_up;
        JSValue v = JS_NewStringLen(f->ctx, s, len);
        return JS_IsException(v) ? give_up : v;
    }
    case 't':
        return fast_word(f, "true", 4) ? JS_TRUE : give_up;
    case 'f':
        return fast_word(f, "false", 5) ? JS_FALSE : give_up;
    case 'n':
        return fast_word(f, "null", 4) ? JS_NULL : give_up;
    }
    return fast_int(f);
}

JSValue ptcx_parse_result(JSContext *ctx, const char *json, size_t len)
{
    fast_parser f = {.ctx = ctx, .p = json, .end = json + len};
    JSValue v = fast_value(&f);
    if (!JS_IsUninitialized(v)) {
        skip_space(&f);
        if (f.p == f.end)
            return v;
        JS_FreeValue(ctx, v);
    }
    if (JS_HasException(ctx))
        JS_FreeValue(ctx, JS_GetException(ctx));
    return JS_ParseJSON(ctx, json, len, "<tool result>");
}
