/* arena.h - a workspace carved once, handed out in pieces.
 *
 * Lessons 4 and 5 replace thousands of per-step allocations with one tracked block allocated up front (the
 * haste way: "the caller allocates all workspace"). The arena does not allocate: the caller gives it a base
 * pointer from host_alloc or dev_alloc, so the same code carves host and device memory, and the tracker sees
 * one allocation, labelled by the caller.
 *
 * Planning: an arena with a NULL base counts without handing out memory. Run the carving code once on a
 * planning arena, allocate arena.used bytes, then run it again on the real one: the size formula and the
 * layout cannot disagree.
 */
#ifndef KERNELS_ARENA_H
#define KERNELS_ARENA_H

#include <stddef.h>
#include "../../kernels/runtime/dtype.h"

typedef struct {
    char *base;      /* NULL while planning */
    size_t capacity; /* bytes available at base (ignored while planning) */
    size_t used;     /* bytes handed out so far, alignment padding included */
} arena;

#define ARENA_ALIGN 256 /* cudaMalloc's alignment: pieces stay aligned for vector loads and cuBLAS */

void arena_init(arena *a, void *base, size_t capacity);
void arena_plan(arena *a); /* a counting arena: base NULL */
/* count elements of type t, aligned to ARENA_ALIGN. Returns NULL while planning. Running out of a real
 * arena, or a size that overflows, is a programming error: it prints what was asked and aborts. */
void *arena_take(arena *a, size_t count, dtype t, const char *what);
void arena_reset(arena *a); /* every piece is given back at once */

/* The bytes a carving takes, the one way every workspace is sized: a (an arena variable) becomes a counting
 * arena, carve_call carves from &a, and the expression is what it used. The layout the call fills holds
 * NULLs.
 *     arena a;
 *     cpu_workspace w;
 *     return ARENA_BYTES(a, carve(&a, d, &w)); */
#define ARENA_BYTES(a, carve_call) (arena_plan(&(a)), (carve_call), (a).used)

#endif
