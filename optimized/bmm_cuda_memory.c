/* bmm_cuda_memory.c - lesson 1's CUDA version's device bytes and its fit, computed without nvcc or a device
 * (--predict, the tests): cuda-v1's formula is the CPU's plus the tracked cuBLAS workspace. */
#include "../kernels/runtime/cuda_track.h" /* CUBLAS_WORKSPACE_BYTES; declarations only, no CUDA needed */
#include "bmm_grouped.h"

#include <limits.h>

bmm_memory cuda_bmm_memory(const bmm_dims *d)
{
    bmm_memory m = cpu_bmm_memory(d);
    m.forward_live = size_add(m.forward_live, CUBLAS_WORKSPACE_BYTES);
    m.peak = size_add(m.peak, CUBLAS_WORKSPACE_BYTES);
    m.allocs += 1; /* the workspace */
    return m;
}

int cuda_bmm_dims_fit(const bmm_dims *d)
{
    size_t lim = INT_MAX;
    return d->B <= lim && d->G <= lim && d->K <= lim && d->N <= lim && size_mul(d->G, d->K) <= lim &&
           size_mul(d->G, d->N) <= lim && size_mul(d->K, d->N) <= lim;
}
