/* arena.c - bump allocation inside a block the caller owns. */
#include "arena.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void arena_init(arena *a, void *base, size_t capacity)
{
    a->base = base;
    a->capacity = capacity;
    a->used = 0;
}

void arena_plan(arena *a) { arena_init(a, NULL, SIZE_MAX); }

void *arena_take(arena *a, size_t count, dtype t, const char *what)
{
    size_t es = dtype_size(t);
    size_t start = (a->used + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (start < a->used || (es && count > (SIZE_MAX - start) / es)) {
        fprintf(stderr, "arena: %zu x %s for '%s' overflows size_t\n", count, dtype_name(t), what);
        abort();
    }
    size_t end = start + count * es;
    if (a->base && end > a->capacity) {
        fprintf(stderr, "arena: '%s' needs bytes [%zu, %zu) but the arena holds %zu\n", what, start, end,
                a->capacity);
        abort();
    }
    a->used = end;
    return a->base ? a->base + start : NULL;
}

void arena_reset(arena *a) { a->used = 0; }
