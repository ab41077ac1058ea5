/*
 * memory.c: the engine's allocator. It enforces the run's memory limit
 * itself (instead of JS_SetMemoryLimit) so that it can remember that the
 * limit was reached: when the engine is so short of memory that it cannot
 * even allocate the error for it, it throws null, and the glue must still
 * report the run as out of memory.
 */
#include <malloc.h>
#include <stdlib.h>

#include "ptcx.h"

static size_t used, limit;
static bool exhausted;

static bool refuse(size_t more)
{
    if (limit != 0 && used + more > limit) {
        exhausted = true;
        return true;
    }
    return false;
}

static void *counted(void *p)
{
    if (p)
        used += malloc_usable_size(p);
    else
        exhausted = true;
    return p;
}

static void *pm_malloc(void *opaque, size_t size)
{
    return refuse(size) ? NULL : counted(malloc(size));
}

static void *pm_calloc(void *opaque, size_t count, size_t size)
{
    if (size != 0 && count > (size_t)-1 / size)
        return NULL;
    return refuse(count * size) ? NULL : counted(calloc(count, size));
}

static void pm_free(void *opaque, void *ptr)
{
    if (ptr) {
        used -= malloc_usable_size(ptr);
        free(ptr);
    }
}

static void *pm_realloc(void *opaque, void *ptr, size_t size)
{
    size_t old = ptr ? malloc_usable_size(ptr) : 0;
    if (size > old && refuse(size - old))
        return NULL;
    void *p = realloc(ptr, size);
    if (!p) {
        exhausted = true;
        return NULL;
    }
    used = used - old + malloc_usable_size(p);
    return p;
}

static size_t pm_usable_size(const void *ptr)
{
    return malloc_usable_size((void *)ptr);
}

const JSMallocFunctions ptcx_malloc_functions = {
    pm_calloc, pm_malloc, pm_free, pm_realloc, pm_usable_size,
};

void ptcx_set_memory_limit(size_t bytes) { limit = bytes; }

bool ptcx_memory_exhausted(void) { return exhausted; }

void ptcx_memory_forget(void) { exhausted = false; }
