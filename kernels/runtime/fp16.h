/* fp16.h - IEEE half storage: 5 exponent bits, 10 mantissa bits. float -> f16 rounds to nearest, ties to even
 * (as cvt.rn.f16.f32 does), overflows to +-Inf past 65504, keeps NaN a quiet NaN and rounds small values to
 * subnormals; HD, so a kernel and its CPU test round identically. */
#ifndef KERNELS_FP16_H
#define KERNELS_FP16_H

#include <stdint.h>
#include <string.h>
#include "hd.h"

typedef uint16_t f16; /* raw bits; never do arithmetic on it directly */

HD f16 f16_from_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint32_t sign = u >> 16 & 0x8000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (f16)(sign | 0x7e00u | (a >> 13 & 0x3ffu)); /* NaN, quiet */
    if (a >= 0x477ff000u)
        return (f16)(sign | 0x7c00u); /* 65520 and up (the tie above 65504 rounds up): Inf */
    if (a >= 0x38800000u) { /* normal: rebias the exponent by 127 - 15, round 13 bits off */
        uint32_t r = a - 0x38000000u;
        return (f16)(sign | (r + 0xfffu + (r >> 13 & 1u)) >> 13);
    }
    int e = (int)(a >> 23); /* subnormal: the value in units of 2^-24, rounded; at or below 2^-25: zero */
    if (e < 102) return (f16)sign;
    uint32_t m = (a & 0x7fffffu) | 0x800000u, s = (uint32_t)(126 - e);
    return (f16)(sign | (m + (1u << (s - 1)) - 1u + (m >> s & 1u)) >> s);
}

#endif
