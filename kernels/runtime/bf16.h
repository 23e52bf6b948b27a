/* bf16.h - bfloat16 storage: the top 16 bits of an IEEE float32 (8 exponent bits, 7 mantissa bits).
 *
 * Lesson 5 keeps products in bf16 the way mixed-precision training does. Conversions are HD so the GPU
 * kernels and the CPU reference round identically. float -> bf16 rounds to nearest, ties to even, and keeps
 * NaN a NaN.
 */
#ifndef KERNELS_BF16_H
#define KERNELS_BF16_H

#include <stdint.h>
#include <string.h>
#include "hd.h"

typedef uint16_t bf16; /* raw bits; never do arithmetic on it directly */

HD uint32_t bf16_f32_bits(float f) { uint32_t u; memcpy(&u, &f, sizeof u); return u; }

HD bf16 bf16_from_f32(float f)
{
    uint32_t u = bf16_f32_bits(f);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) /* NaN: keep it quiet and a NaN */
        return (bf16)((u >> 16) | 0x0040u);
    /* round to nearest even: add 0x7fff plus the lowest kept bit, then truncate */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (bf16)(u >> 16);
}

HD float bf16_to_f32(bf16 h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#endif
