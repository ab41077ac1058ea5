/*
 * result.c: the JSON of a call's result, parsed (ptcx_parse_result). Most
 * results are small objects of ASCII keys, integers and ASCII strings:
 * parsing them here costs about 40% less than JS_ParseJSON does. Anything
 * else (a fraction, an exponent, an integer past int32 or -0, an escape or
 * a non-ASCII byte in a string, nesting past FAST_DEPTH, a syntax error)
 * makes the fast path give up, and the whole text is parsed by
 * JS_ParseJSON, so the value and the errors are always JS_ParseJSON's.
 */
#include <string.h>

#include "ptcx.h"

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

/* kept_object reads an object, after its opening brace, whose keys are
 * those of the shape the last result had (JS_KeepShapeOf), in its order,
 * and makes it of that shape at once. It returns give_up for a value or a
 * syntax it gives up on, and JS_UNDEFINED, having read nothing, when the
 * keys are not those (then fast_object reads the object key by key). */
static JSValue kept_object(fast_parser *f)
{
    const char *const *keys;
    const uint32_t *lens;
    int n = JS_KeptShapeKeys(&keys, &lens);
    if (n <= 0)
        return JS_UNDEFINED;
    const char *start = f->p;
    JSValue values[PTCX_KEPT_KEYS];
    int i = 0;
    JSValue ret = JS_UNDEFINED;
    for (;;) {
        skip_space(f);
        if (i == n || f->p >= f->end || *f->p != '"')
            break;
        f->p++;
        size_t len;
        const char *key = fast_string(f, &len);
        if (!key || len != lens[i] || memcmp(key, keys[i], len) != 0)
            break;
        skip_space(f);
        if (f->p >= f->end || *f->p != ':')
            break;
        f->p++;
        JSValue v = fast_value(f);
        if (JS_IsUninitialized(v)) {
            ret = give_up;
            break;
        }
        values[i++] = v;
        skip_space(f);
        if (f->p < f->end && *f->p == ',') {
            f->p++;
            continue;
        }
        if (i == n && f->p < f->end && *f->p == '}') {
            f->p++;
            JSValue obj = JS_NewKeptShapeObject(f->ctx, values);
            return JS_IsException(obj) ? give_up : obj;
        }
        break;
    }
    for (int j = 0; j < i; j++)
        JS_FreeValue(f->ctx, values[j]);
    f->p = start;
    return ret;
}

static JSValue fast_object(fast_parser *f)
{
    JSValue kept = kept_object(f);
    if (!JS_IsUndefined(kept))
        return kept;
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
        int r = JS_DefineFreshValue(f->ctx, obj, atom, v);
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
        if (f.p == f.end) {
            JS_KeepShapeOf(ctx, v);
            return v;
        }
        JS_FreeValue(ctx, v);
    }
    if (JS_HasException(ctx))
        JS_FreeValue(ctx, JS_GetException(ctx));
    return JS_ParseJSON(ctx, json, len, "<tool result>");
}
