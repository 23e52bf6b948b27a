/* prefetch.h - bring a matrix that the next GEMM uses into the cache, a slice per row of the loop before it.
 *
 * Lesson 2's chain runs one small product per step between two row passes (exp before it, log after it). The
 * product's matrix P_i (c*c floats, 40 KB at c = 100) was last touched a whole pass earlier, so without help the
 * GEMM starts on a cold operand and runs below its rate alone (`make gemm-in-context`: the rows "in the lesson"
 * and "P prefetched"). Spread over the rows, the prefetches hide under the row pass's exp arithmetic. */
#ifndef KERNELS_PREFETCH_H
#define KERNELS_PREFETCH_H

#include <stddef.h>

enum { PREFETCH_LINE = 64 }; /* bytes per cache line on the x86-64 cores this builds for */

/* Prefetch slice `part` of `parts` of [p, p + bytes): call it once per row, part = row, parts = rows. for_write:
 * the GEMM writes the matrix (with beta = 0 it still pulls each line in before writing it). */
static inline void prefetch_slice(const void *p, size_t bytes, size_t part, size_t parts, int for_write)
{
    size_t lines = (bytes + PREFETCH_LINE - 1) / PREFETCH_LINE, per = (lines + parts - 1) / parts;
    size_t end = (part + 1) * per < lines ? (part + 1) * per : lines;
    for (size_t l = part * per; l < end; l++) {
        const char *a = (const char *)p + l * PREFETCH_LINE;
        if (for_write) __builtin_prefetch(a, 1, 3);
        else __builtin_prefetch(a, 0, 3);
    }
}

#endif
