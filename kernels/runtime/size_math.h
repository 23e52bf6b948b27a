/* size_math.h - overflow-checked products for memory formulas. A lesson's dimensions come from the command
 * line, so B*G*K*N*4 may not fit in size_t: every formula multiplies through size_mul, which saturates at
 * SIZE_MAX (and remembers it), and the driver refuses dims whose formulas saturated. */
#ifndef LESSONS_SIZE_MATH_H
#define LESSONS_SIZE_MATH_H

#include <stddef.h>
#include <stdint.h>

static inline size_t size_mul(size_t a, size_t b)
{
    if (a && b > SIZE_MAX / a) return SIZE_MAX;
    return a * b;
}

static inline size_t size_add(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

#endif
