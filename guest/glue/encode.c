/*
 * encode.c: natives.encode(value, omitUndefined), the check-and-encode of
 * plain JSON for tool arguments and results.
 *
 * It walks the value once, reading each property once (a getter runs once),
 * and either returns the JSON text or a refusal [code, path, detail] that
 * the prelude turns into a message ("args.a[2] is a function"). Plain JSON
 * is null, booleans, finite numbers, strings, arrays and objects whose
 * prototype is Object.prototype or null, without cycles, at most
 * PTCX_JSON_DEPTH deep. Doing this in C rather than in the prelude makes a
 * nested call several times cheaper.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cutils.h"
#include "ptcx.h"

#define PTCX_JSON_DEPTH 100

typedef struct {
    JSContext *ctx;
    DynBuf out;
    bool omit_undefined;
    int depth;
    JSValueConst parents[PTCX_JSON_DEPTH];
    /* The key being encoded in each open container: an atom, or else an
     * index (NO_KEY: none yet). */
    JSAtom keys[PTCX_JSON_DEPTH];
    uint32_t indexes[PTCX_JSON_DEPTH];
    /* A refusal: its code (PTCX_REFUSE_*) and the offending value or the
     * exception that was caught. */
    int refusal;
    JSValue detail;
} encoder;

#define NO_KEY UINT32_MAX

static JSValue object_proto = JS_UNDEFINED;

static void *buf_realloc(void *opaque, void *ptr, size_t size)
{
    return js_realloc_rt(JS_GetRuntime(opaque), ptr, size);
}

/* refuse records why the value at the current path is not plain JSON. */
static int refuse(encoder *e, int code, JSValue detail)
{
    e->refusal = code;
    e->detail = detail;
    return -1;
}

/* caught turns a pending exception into a refusal, unless it is one a
 * program must not observe. */
static int caught(encoder *e, int code)
{
    JSValue exc = JS_GetException(e->ctx);
    if (JS_IsUncatchableError(exc)) {
        JS_Throw(e->ctx, exc);
        return -2;
    }
    return refuse(e, code, exc);
}

static void put_string(encoder *e, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    DynBuf *b = &e->out;
    dbuf_putc(b, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            dbuf_putc(b, '\\');
            dbuf_putc(b, c);
        } else if (c < 0x20) {
            const char *esc = c == '\b' ? "\\b" : c == '\f' ? "\\f" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
            if (esc) {
                dbuf_putstr(b, esc);
            } else {
                char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
                dbuf_putstr(b, u);
            }
        } else if (c == 0xED && i + 2 < len && (unsigned char)s[i + 1] >= 0xA0) {
            /* A lone surrogate, kept by QuickJS as its 3-byte encoding:
             * escaped, as JSON.stringify does. */
            unsigned cp = ((c & 0x0F) << 12) | (((unsigned char)s[i + 1] & 0x3F) << 6) | ((unsigned char)s[i + 2] & 0x3F);
            char u[7] = {'\\', 'u', hex[cp >> 12], hex[(cp >> 8) & 15], hex[(cp >> 4) & 15], hex[cp & 15], 0};
            dbuf_putstr(b, u);
            i += 2;
        } else {
            dbuf_putc(b, c);
        }
    }
    dbuf_putc(b, '"');
}

static int put_js_string(encoder *e, JSValueConst v)
{
    size_t len;
    const char *s = JS_ToCStringLen(e->ctx, &len, v);
    if (!s)
        return -2;
    put_string(e, s, len);
    JS_FreeCString(e->ctx, s);
    return 0;
}

static int encode_value(encoder *e, JSValueConst v);

static int encode_array(encoder *e, JSValueConst v)
{
    int level = e->depth - 1;
    e->keys[level] = JS_ATOM_NULL;
    e->indexes[level] = NO_KEY;
    int64_t len;
    if (JS_GetLength(e->ctx, v, &len))
        return caught(e, PTCX_REFUSE_UNREADABLE);
    dbuf_putc(&e->out, '[');
    for (int64_t i = 0; i < len; i++) {
        if (i > 0)
            dbuf_putc(&e->out, ',');
        e->indexes[level] = (uint32_t)i;
        JSValue x = JS_GetPropertyInt64(e->ctx, v, i);
        if (JS_IsException(x))
            return caught(e, PTCX_REFUSE_UNREADABLE);
        int r = encode_value(e, x);
        JS_FreeValue(e->ctx, x);
        if (r)
            return r;
    }
    dbuf_putc(&e->out, ']');
    return 0;
}

/* PLAIN_PROPS is how many properties encode_plain takes at most. */
#define PLAIN_PROPS 16

/* encode_plain appends the JSON of a plain object of at most PLAIN_PROPS
 * properties whose values encode without running code or being refused
 * (null, booleans, finite numbers, strings; undefined when it is
 * omitted), read straight from the engine's object (JS_PlainOwnProps):
 * the same text as encode_object's, without listing the keys, reading each
 * through the general path and converting it to a C string. It returns 1
 * for any other object, which encode_object encodes. */
static int encode_plain(encoder *e, JSValueConst v)
{
    const char *keys[PLAIN_PROPS];
    size_t lens[PLAIN_PROPS];
    JSValueConst values[PLAIN_PROPS];
    int n = JS_PlainOwnProps(e->ctx, v, keys, lens, values, PLAIN_PROPS);
    if (n < 0)
        return 1;
    for (int i = 0; i < n; i++) {
        switch (JS_VALUE_GET_NORM_TAG(values[i])) {
        case JS_TAG_NULL:
        case JS_TAG_BOOL:
        case JS_TAG_INT:
        case JS_TAG_STRING:
        case JS_TAG_STRING_ROPE:
            break;
        case JS_TAG_FLOAT64:
            if (!isfinite(JS_VALUE_GET_FLOAT64(values[i])))
                return 1;
            break;
        case JS_TAG_UNDEFINED:
            if (!e->omit_undefined)
                return 1;
            break;
        default:
            return 1;
        }
    }
    dbuf_putc(&e->out, '{');
    bool first = true;
    for (int i = 0; i < n; i++) {
        if (JS_IsUndefined(values[i]))
            continue;
        if (!first)
            dbuf_putc(&e->out, ',');
        first = false;
        put_string(e, keys[i], lens[i]);
        dbuf_putc(&e->out, ':');
        int r = encode_value(e, values[i]);
        if (r)
            return r;
    }
    dbuf_putc(&e->out, '}');
    return 0;
}

static int encode_object(encoder *e, JSValueConst v)
{
    int level = e->depth - 1;
    e->keys[level] = JS_ATOM_NULL;
    e->indexes[level] = NO_KEY;
    int plain = encode_plain(e, v);
    if (plain <= 0)
        return plain;
    JSPropertyEnum *props;
    uint32_t n;
    if (JS_GetOwnPropertyNames(e->ctx, &props, &n, v, JS_GPN_STRING_MASK | JS_GPN_ENUM_ONLY))
        return caught(e, PTCX_REFUSE_UNREADABLE);
    int r = 0;
    bool first = true;
    dbuf_putc(&e->out, '{');
    for (uint32_t i = 0; i < n && r == 0; i++) {
        e->keys[level] = props[i].atom;
        JSValue x = JS_GetProperty(e->ctx, v, props[i].atom);
        if (JS_IsException(x)) {
            r = caught(e, PTCX_REFUSE_UNREADABLE);
            break;
        }
        if (!(JS_IsUndefined(x) && e->omit_undefined)) {
            size_t mark = e->out.size;
            if (!first)
                dbuf_putc(&e->out, ',');
            size_t klen;
            const char *k = JS_AtomToCStringLen(e->ctx, &klen, props[i].atom);
            if (!k) {
                r = -2;
            } else {
                put_string(e, k, klen);
                JS_FreeCString(e->ctx, k);
                dbuf_putc(&e->out, ':');
                r = encode_value(e, x);
            }
            if (r)
                e->out.size = mark;
            first = false;
        }
        JS_FreeValue(e->ctx, x);
    }
    if (r == 0)
        dbuf_putc(&e->out, '}');
    else if (r == -1 && e->keys[level] != JS_ATOM_NULL)
        /* Keep the failing key for the path: props are freed below. */
        e->keys[level] = JS_DupAtom(e->ctx, e->keys[level]);
    JS_FreePropertyEnum(e->ctx, props, n);
    return r;
}

/* encode_value appends the JSON of v. It returns 0, -1 for a refusal
 * (e->refusal) or -2 for an exception (out of memory, interrupted). */
static int encode_value(encoder *e, JSValueConst v)
{
    char num[32];
    switch (JS_VALUE_GET_NORM_TAG(v)) {
    case JS_TAG_NULL:
        dbuf_putstr(&e->out, "null");
        return 0;
    case JS_TAG_BOOL:
        dbuf_putstr(&e->out, JS_VALUE_GET_BOOL(v) ? "true" : "false");
        return 0;
    case JS_TAG_INT: {
        /* Digits written backwards: snprintf costs more than the rest of a
         * small call's arguments. */
        int32_t n = JS_VALUE_GET_INT(v);
        uint32_t u = n < 0 ? 0u - (uint32_t)n : (uint32_t)n;
        char *p = num + sizeof(num);
        do {
            *--p = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        if (n < 0)
            *--p = '-';
        dbuf_put(&e->out, (const uint8_t *)p, (size_t)(num + sizeof(num) - p));
        return 0;
    }
    case JS_TAG_FLOAT64: {
        if (!isfinite(JS_VALUE_GET_FLOAT64(v)))
            return refuse(e, PTCX_REFUSE_NUMBER, JS_DupValue(e->ctx, v));
        /* JSON numbers are written as JavaScript writes them. */
        size_t len;
        const char *s = JS_ToCStringLen(e->ctx, &len, v);
        if (!s)
            return -2;
        dbuf_put(&e->out, (const uint8_t *)s, len);
        JS_FreeCString(e->ctx, s);
        return 0;
    }
    case JS_TAG_STRING:
    case JS_TAG_STRING_ROPE:
        return put_js_string(e, v);
    case JS_TAG_UNDEFINED:
        return refuse(e, PTCX_REFUSE_UNDEFINED, JS_UNDEFINED);
    case JS_TAG_BIG_INT:
    case JS_TAG_SHORT_BIG_INT:
        return refuse(e, PTCX_REFUSE_BIGINT, JS_DupValue(e->ctx, v));
    case JS_TAG_SYMBOL:
        return refuse(e, PTCX_REFUSE_SYMBOL, JS_UNDEFINED);
    case JS_TAG_OBJECT:
        break;
    default:
        return refuse(e, PTCX_REFUSE_NOT_PLAIN, JS_UNDEFINED);
    }
    /* An ordinary object of a plain prototype is no function, proxy or
     * array, and its prototype is read without running code: the checks
     * below that it passes are skipped (JS_IsOrdinaryOf). */
    bool ordinary = JS_IsOrdinaryOf(v, object_proto);
    if (!ordinary && JS_IsFunction(e->ctx, v))
        return refuse(e, PTCX_REFUSE_FUNCTION, JS_UNDEFINED);
    if (!ordinary && JS_IsProxy(v))
        return refuse(e, PTCX_REFUSE_PROXY, JS_UNDEFINED);
    for (int i = 0; i < e->depth; i++) {
        if (JS_VALUE_GET_PTR(e->parents[i]) == JS_VALUE_GET_PTR(v))
            return refuse(e, PTCX_REFUSE_CIRCULAR, JS_UNDEFINED);
    }
    if (e->depth >= PTCX_JSON_DEPTH)
        return refuse(e, PTCX_REFUSE_DEPTH, JS_UNDEFINED);
    bool array = !ordinary && JS_IsArray(v);
    if (!array && !ordinary) {
        JSValue proto = JS_GetPrototype(e->ctx, v);
        if (JS_IsException(proto))
            return caught(e, PTCX_REFUSE_UNREADABLE);
        bool plain = JS_IsNull(proto) || JS_VALUE_GET_PTR(proto) == JS_VALUE_GET_PTR(object_proto);
        JS_FreeValue(e->ctx, proto);
        if (!plain)
            return refuse(e, PTCX_REFUSE_NOT_PLAIN, JS_DupValue(e->ctx, v));
    }
    e->parents[e->depth++] = v;
    int r = array ? encode_array(e, v) : encode_object(e, v);
    if (r == 0)
        e->depth--;
    return r;
}

/* path renders where the refusal happened, from the keys of each level:
 * .name, ["odd name"] or [index]. */
static JSValue path(encoder *e)
{
    DynBuf b;
    dbuf_init2(&b, e->ctx, buf_realloc);
    for (int i = 0; i < e->depth; i++) {
        if (e->keys[i] == JS_ATOM_NULL) {
            if (e->indexes[i] == NO_KEY)
                continue;
            char idx[16];
            snprintf(idx, sizeof(idx), "[%u]", (unsigned)e->indexes[i]);
            dbuf_putstr(&b, idx);
            continue;
        }
        size_t len;
        const char *k = JS_AtomToCStringLen(e->ctx, &len, e->keys[i]);
        if (!k)
            continue;
        bool ident = len > 0 && !(k[0] >= '0' && k[0] <= '9');
        for (size_t j = 0; j < len && ident; j++) {
            char c = k[j];
            ident = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
        }
        if (ident) {
            dbuf_putc(&b, '.');
            dbuf_put(&b, (const uint8_t *)k, len);
        } else {
            DynBuf saved = e->out;
            e->out = b;
            dbuf_putc(&e->out, '[');
            put_string(e, k, len);
            dbuf_putc(&e->out, ']');
            b = e->out;
            e->out = saved;
        }
        JS_FreeCString(e->ctx, k);
    }
    JSValue s = b.error ? JS_ThrowOutOfMemory(e->ctx) : JS_NewStringLen(e->ctx, (const char *)b.buf, b.size);
    dbuf_free(&b);
    return s;
}

/* ptcx_encode appends the JSON of v to out (see ptcx.h). */
int ptcx_encode(JSContext *ctx, JSValueConst v, bool omit_undefined, DynBuf *out, JSValue *refusal)
{
    /* Only the scalars are set: parents, keys and indexes are written
     * before they are read, level by level, and clearing them (1.6 KiB)
     * cost a call more than encoding small arguments does. */
    encoder e;
    e.ctx = ctx;
    e.out = *out;
    e.omit_undefined = omit_undefined;
    e.depth = 0;
    e.refusal = 0;
    e.detail = JS_UNDEFINED;
    if (JS_IsUndefined(object_proto)) {
        JSValue obj = JS_NewObject(ctx);
        object_proto = JS_GetPrototype(ctx, obj); /* kept for the instance's life */
        JS_FreeValue(ctx, obj);
    }
    int r = encode_value(&e, v);
    *out = e.out;
    if (r == 0 && out->error)
        r = -3;
    if (r == -1) {
        JSValue p = path(&e);
        JSValue items[3] = {JS_NewInt32(ctx, e.refusal), p, e.detail};
        if (JS_IsException(p)) {
            JS_FreeValue(ctx, e.detail);
            r = -2;
        } else {
            *refusal = JS_NewArrayFrom(ctx, 3, items);
            if (JS_IsException(*refusal))
                r = -2;
        }
    }
    /* The atoms of the failing level were duplicated (encode_object). */
    for (int i = 0; e.refusal != 0 && i < e.depth; i++) {
        if (e.keys[i] != JS_ATOM_NULL)
            JS_FreeAtom(ctx, e.keys[i]);
    }
    return r;
}

void ptcx_encode_buffer(JSContext *ctx, DynBuf *out) { dbuf_init2(out, ctx, buf_realloc); }

/* natives.encode(value, omitUndefined) -> JSON string | [code, path, detail] */
JSValue ptcx_native_encode(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    DynBuf out;
    ptcx_encode_buffer(ctx, &out);
    JSValue ret = JS_UNDEFINED;
    switch (ptcx_encode(ctx, argv[0], JS_ToBool(ctx, argv[1]), &out, &ret)) {
    case 0:
        ret = JS_NewStringLen(ctx, (const char *)out.buf, out.size);
        break;
    case -1:
        break;
    case -2:
        ret = JS_EXCEPTION;
        break;
    default:
        ret = JS_ThrowOutOfMemory(ctx);
    }
    dbuf_free(&out);
    return ret;
}
