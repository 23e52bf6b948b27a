/* emu_ptx.h - TEST-ONLY: what include/mma_ptx.h (the shim of kernels/runtime/ptx/mma_ptx.h) shares with
 * emu_ptx.cc: one lane's mma.sync or ldmatrix request, and the ldmatrix precondition check. */
#ifndef CUDA_EMU_PTX_H
#define CUDA_EMU_PTX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "emu_kernel.h"

namespace emu {

/* One lane's request (W_PTX): for ldmatrix, num matrices, this lane's row address and its destination
 * registers r[0..num-1]; for mma.sync, its fragments (a[4], b[2], c[4]; d[4], written after every lane's
 * c was read) */
struct ptx_lane : warp_collective {
    int num;
    const void *row;
    uint32_t *r[4];
    const uint32_t *a, *b;
    const float *c;
    float *d;
};

/* ldmatrix's preconditions (PTX ISA, "ldmatrix"): the row address of each lane that supplies one (lanes 0 to
 * 8 num - 1) in the block's shared memory and 16-byte aligned. Fails the launch and returns -1 otherwise. */
int ldmatrix_check(warp_collective *const lanes[32], const char *file, int line, size_t warp);

/* cvt.rna.tf32.f32: to nearest, ties away from zero, to 10 mantissa bits (low 13 bits zero); Inf stays Inf, a
 * NaN stays a (quiet) NaN. mma.h's __float_to_tf32 is the same instruction. */
inline uint32_t tf32_rna_bits(float in)
{
    uint32_t u;
    memcpy(&u, &in, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return (u & 0x7fffff) ? (u | 0x00400000u) & 0xffffe000u : u;
    return (u + 0x1000u) & 0xffffe000u; /* sign-magnitude: adding half an ulp rounds ties away from zero */
}

} /* namespace emu */

#endif
