/* linear_ce_reduce.cuh - the warp step of lesson 5's row logsumexp, shared by the v1 row kernel and the v2
 * (Cut Cross-Entropy) kernels: each lane's (running max, rescaled sum) pair is merged down the warp with
 * shuffles, lce_lse_merge (linear_ce_math.h) doing the rescaling. Lane 0 ends with the warp's pair. */
#ifndef KERNELS_LINEAR_CE_REDUCE_CUH
#define KERNELS_LINEAR_CE_REDUCE_CUH

#include "linear_ce_geometry.h"
#include "linear_ce_math.h"

static __device__ inline lce_lse_acc lce_warp_lse(lce_lse_acc a)
{
    for (int off = LCE_WARP / 2; off > 0; off /= 2) {
        lce_lse_acc b;
        b.m = __shfl_down_sync(0xffffffffu, a.m, off);
        b.s = __shfl_down_sync(0xffffffffu, a.s, off);
        a = lce_lse_merge(a, b);
    }
    return a;
}

#endif
