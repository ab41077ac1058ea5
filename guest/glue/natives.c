/*
 * natives.c: the native functions the prelude is given (they forward to the
 * host imports), Math.random, and the unhandled-rejection tracker.
 *
 * Only the prelude ever sees the natives object: the glue passes it as the
 * argument of the prelude's outer function and never stores it on a global.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ptcx.h"

/* natives.log(level, text) */
static JSValue native_log(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    int32_t level;
    size_t len;
    if (JS_ToInt32(ctx, &level, argv[0]))
        return JS_EXCEPTION;
    const char *text = JS_ToCStringLen(ctx, &len, argv[1]);
    if (!text)
        return JS_EXCEPTION;
    ptcx_host_log(level, text, len);
    JS_FreeCString(ctx, text);
    return JS_UNDEFINED;
}

/* natives.timerSet(delayMs) -> id (> 0) or a negative refusal code. */
static JSValue native_timer_set(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    int32_t ms;
    if (JS_ToInt32(ctx, &ms, argv[0]))
        return JS_EXCEPTION;
    return JS_NewInt32(ctx, ptcx_host_timer_set(ms < 0 ? 0 : ms));
}

/* natives.timerClear(id) */
static JSValue native_timer_clear(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    int32_t id;
    if (JS_ToInt32(ctx, &id, argv[0]))
        return JS_EXCEPTION;
    ptcx_host_timer_clear(id);
    return JS_UNDEFINED;
}

/* natives.result(json) and natives.error(json): magic 0 and 1. */
static JSValue native_settle(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv,
                             int magic)
{
    size_t len;
    const char *json = JS_ToCStringLen(ctx, &len, argv[0]);
    if (!json)
        return JS_EXCEPTION;
    if (magic == 0)
        ptcx_host_result(json, len);
    else
        ptcx_host_error(json, len);
    JS_FreeCString(ctx, json);
    return JS_UNDEFINED;
}

static const JSCFunctionListEntry natives_list[] = {
    JS_CFUNC_DEF("tools", 4, ptcx_native_tools),
    JS_CFUNC_DEF("log", 2, native_log),
    JS_CFUNC_DEF("timerSet", 1, native_timer_set),
    JS_CFUNC_DEF("timerClear", 1, native_timer_clear),
    JS_CFUNC_MAGIC_DEF("result", 1, native_settle, 0),
    JS_CFUNC_MAGIC_DEF("error", 1, native_settle, 1),
    JS_CFUNC_DEF("encode", 2, ptcx_native_encode),
};

JSValue ptcx_new_natives(JSContext *ctx)
{
    JSValue obj = JS_NewObjectProto(ctx, JS_NULL);
    if (JS_IsException(obj))
        return obj;
    if (JS_SetPropertyFunctionList(ctx, obj, natives_list, sizeof(natives_list) / sizeof(natives_list[0]))) {
        JS_FreeValue(ctx, obj);
        return JS_EXCEPTION;
    }
    return obj;
}

/*
 * Math.random: xorshift128+, seeded at every start from the host's random
 * source (WASI random_get), so a deterministic host gives a deterministic
 * sequence and a real host a fresh one per run, whatever the engine seeded
 * itself with when the context was created.
 */
static uint64_t rng[2] = {0x9e3779b97f4a7c15ull, 0xbf58476d1ce4e5b9ull};

void ptcx_reseed_random(void)
{
    uint64_t seed[2];
    if (getentropy(seed, sizeof(seed)) == 0 && (seed[0] | seed[1]) != 0) {
        rng[0] = seed[0];
        rng[1] = seed[1];
    }
}

static JSValue native_random(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    uint64_t s1 = rng[0];
    const uint64_t s0 = rng[1];
    rng[0] = s0;
    s1 ^= s1 << 23;
    rng[1] = s1 ^ s0 ^ (s1 >> 18) ^ (s0 >> 5);
    /* 53 random bits scaled into [0, 1). */
    return JS_NewFloat64(ctx, (double)((rng[1] + s0) >> 11) * 0x1.0p-53);
}

int ptcx_install_random(JSContext *ctx)
{
    JSValue global = JS_GetGlobalObject(ctx);
    JSValue math = JS_GetPropertyStr(ctx, global, "Math");
    JS_FreeValue(ctx, global);
    if (JS_IsException(math))
        return -1;
    JSValue fn = JS_NewCFunction(ctx, native_random, "random", 0);
    int ret = JS_DefinePropertyValueStr(ctx, math, "random", fn, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
    JS_FreeValue(ctx, math);
    return ret < 0 ? -1 : 0;
}

/*
 * performance: now() and timeOrigin, counted from origin, a static the glue
 * resets on every restored instance (ptcx_reset_performance). The object is
 * made once, when the image is, so a run that resets the origin writes
 * eight bytes beside rng, not a new object into the heap (JS_AddPerformance
 * allocates one, with its method, and redefines the global: about a dozen
 * pages of the image's heap copied per run). timeOrigin is an accessor, as
 * on the web's Performance.prototype; now is QuickJS's, to the same clock
 * (WASI's monotonic clock, in milliseconds).
 */
static double origin;

static double now_ms(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts))
        return 0;
    return (double)((uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec) / 1e6;
}

void ptcx_reset_performance(void) { origin = now_ms(); }

static JSValue perf_now(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    return JS_NewFloat64(ctx, now_ms() - origin);
}

static JSValue perf_time_origin(JSContext *ctx, JSValueConst this_val)
{
    return JS_NewFloat64(ctx, origin);
}

static const JSCFunctionListEntry perf_list[] = {
    JS_CFUNC_DEF2("now", 0, perf_now, JS_PROP_ENUMERABLE),
    JS_CGETSET_DEF2("timeOrigin", perf_time_origin, NULL, JS_PROP_ENUMERABLE | JS_PROP_CONFIGURABLE),
};

int ptcx_install_performance(JSContext *ctx)
{
    ptcx_reset_performance();
    JSValue perf = JS_NewObject(ctx);
    if (JS_IsException(perf))
        return -1;
    if (JS_SetPropertyFunctionList(ctx, perf, perf_list, sizeof(perf_list) / sizeof(perf_list[0]))) {
        JS_FreeValue(ctx, perf);
        return -1;
    }
    JSValue global = JS_GetGlobalObject(ctx);
    int ret = JS_DefinePropertyValueStr(ctx, global, "performance", perf,
                                        JS_PROP_WRITABLE | JS_PROP_ENUMERABLE | JS_PROP_CONFIGURABLE);
    JS_FreeValue(ctx, global);
    return ret < 0 ? -1 : 0;
}

/*
 * Unhandled rejections: a rejected promise with no handler is remembered
 * until a handler is attached. A program may create many (a Promise.all over
 * thousands of refused calls), so they live in an open-addressing hash set
 * keyed by the promise's address, with tombstones; each entry keeps its
 * insertion number so the oldest can be reported.
 */
typedef struct {
    JSValue promise; /* JS_UNDEFINED: empty; JS_NULL: removed (tombstone) */
    JSValue reason;
    uint32_t seq;
} rejection;

static rejection *rejections;
static size_t rejections_cap; /* a power of two, or 0 */
static size_t rejections_live, rejections_used; /* live entries; live + tombstones */
static uint32_t rejections_seq;
/* Set when an unhandled rejection could not be recorded (out of memory):
 * the run then fails at settlement as if one were recorded. */
static bool rejections_lost;

static size_t slot_of(JSValueConst promise)
{
    uintptr_t p = (uintptr_t)JS_VALUE_GET_PTR(promise);
    return (size_t)((p >> 3) * 2654435761u);
}

/* find returns the slot holding promise, or the slot to insert it at. */
static rejection *find(JSValueConst promise)
{
    size_t mask = rejections_cap - 1, i = slot_of(promise) & mask;
    rejection *insert_at = NULL;
    for (;; i = (i + 1) & mask) {
        rejection *r = &rejections[i];
        if (JS_IsUndefined(r->promise))
            return insert_at ? insert_at : r;
        if (JS_IsNull(r->promise)) {
            if (!insert_at)
                insert_at = r;
        } else if (JS_VALUE_GET_PTR(r->promise) == JS_VALUE_GET_PTR(promise)) {
            return r;
        }
    }
}

static bool grow(JSRuntime *rt)
{
    size_t cap = rejections_cap ? rejections_cap * 2 : 64;
    /* Tombstones alone can fill the table: rehash in place of growing. */
    if (rejections_live * 4 < rejections_cap)
        cap = rejections_cap;
    rejection *old = rejections;
    size_t old_cap = rejections_cap;
    /* The runtime variant does not throw: the tracker must not. */
    rejection *fresh = js_malloc_rt(rt, cap * sizeof(rejection));
    if (!fresh)
        return false;
    for (size_t i = 0; i < cap; i++)
        fresh[i].promise = JS_UNDEFINED;
    rejections = fresh;
    rejections_cap = cap;
    rejections_used = rejections_live;
    for (size_t i = 0; i < old_cap; i++) {
        if (JS_IsObject(old[i].promise))
            *find(old[i].promise) = old[i];
    }
    js_free_rt(rt, old);
    return true;
}

void ptcx_forget_rejection(JSContext *ctx, JSValueConst promise)
{
    if (rejections_live == 0)
        return;
    rejection *r = find(promise);
    if (!JS_IsObject(r->promise))
        return;
    JS_FreeValue(ctx, r->promise);
    JS_FreeValue(ctx, r->reason);
    r->promise = JS_NULL;
    r->reason = JS_UNDEFINED;
    rejections_live--;
}

void ptcx_track_rejection(JSContext *ctx, JSValueConst promise, JSValueConst reason,
                          bool is_handled, void *opaque)
{
    if (is_handled) {
        ptcx_forget_rejection(ctx, promise);
        return;
    }
    if ((rejections_used + 1) * 2 > rejections_cap && !grow(JS_GetRuntime(ctx))) {
        rejections_lost = true;
        return;
    }
    rejection *r = find(promise);
    if (JS_IsObject(r->promise))
        return;
    if (JS_IsUndefined(r->promise))
        rejections_used++;
    r->promise = JS_DupValue(ctx, promise);
    r->reason = JS_DupValue(ctx, reason);
    r->seq = rejections_seq++;
    rejections_live++;
}

JSValue ptcx_first_unhandled(JSContext *ctx)
{
    rejection *oldest = NULL;
    for (size_t i = 0; i < rejections_cap && rejections_live > 0; i++) {
        rejection *r = &rejections[i];
        if (JS_IsObject(r->promise) && (!oldest || r->seq < oldest->seq))
            oldest = r;
    }
    if (oldest)
        return JS_DupValue(ctx, oldest->reason);
    if (rejections_lost)
        return JS_NewString(ctx, "a promise rejection that could not be recorded (out of memory)");
    return JS_UNINITIALIZED;
}

void ptcx_forget_rejections(JSContext *ctx)
{
    for (size_t i = 0; i < rejections_cap; i++) {
        rejection *r = &rejections[i];
        if (JS_IsObject(r->promise)) {
            JS_FreeValue(ctx, r->promise);
            JS_FreeValue(ctx, r->reason);
        }
        r->promise = JS_UNDEFINED;
        r->reason = JS_UNDEFINED;
    }
    rejections_live = rejections_used = 0;
    rejections_lost = false;
}
