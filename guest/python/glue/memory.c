/*
 * memory.c: the Python guest's memory limit. wasi-libc's malloc (dlmalloc)
 * grows the linear memory through sbrk; this sbrk replaces libc's (the
 * linker takes it from glue's objects before it looks in libc.a) and refuses
 * to grow the memory past the run's soft limit (the config's memoryLimit,
 * below the host's page limit, docs/abi.md), remembering that it did. A
 * refused growth makes malloc return NULL and CPython raise MemoryError,
 * with the room between the two limits left for reporting it; the glue
 * lifts the soft limit while it reports the outcome. A growth the host
 * refuses is remembered too.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "ptcx.h"

#define PAGE 65536

static size_t limit;
static bool exhausted;

void *sbrk(intptr_t increment)
{
    size_t size = __builtin_wasm_memory_size(0) * (size_t)PAGE;
    if (increment == 0)
        return (void *)size;
    if (increment < 0 || increment % PAGE != 0)
        abort();
    if (limit != 0 && size + (size_t)increment > limit) {
        exhausted = true;
        errno = ENOMEM;
        return (void *)-1;
    }
    size_t old = __builtin_wasm_memory_grow(0, (size_t)increment / PAGE);
    if (old == SIZE_MAX) {
        exhausted = true;
        errno = ENOMEM;
        return (void *)-1;
    }
    return (void *)(old * PAGE);
}

void ptcx_set_memory_limit(size_t bytes) { limit = bytes; }

bool ptcx_memory_exhausted(void) { return exhausted; }

void ptcx_memory_forget(void) { exhausted = false; }
