/* warp_reduce.h - device only: a float reduced over the 32 lanes of a full warp, the result in every lane (a
 * butterfly of 5 __shfl_xor_sync exchanges, so no lane waits on another's result). */
#ifndef KERNELS_RUNTIME_WARP_REDUCE_H
#define KERNELS_RUNTIME_WARP_REDUCE_H

__device__ static inline float warp_max(float v)
{
    for (int off = 16; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

__device__ static inline float warp_sum(float v)
{
    for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

#endif
