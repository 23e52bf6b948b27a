/* gru_lanes.h - lesson 4's lane groups (cuda-v4, cuda-v5; CUDA sources only): GRU4_LANES lanes share one
 * (row, unit) and each takes every GRU4_LANES-th term of its dot products; this sums the group's partial
 * sums. */
#ifndef KERNELS_GRU_LANES_H
#define KERNELS_GRU_LANES_H

#include "gru_cell_math.h"

/* The sum of v over the GRU4_LANES lanes of a group, in every lane of it; all 32 lanes of the warp call it */
__device__ static inline float gru_group_sum(float v)
{
    for (int o = GRU4_LANES / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

#endif
