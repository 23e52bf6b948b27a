/* gru_cuda_memory.c - lesson 4's CUDA versions' device bytes and fit, computed without nvcc or a device
 * (--predict, the tests): the CPU's formula plus the tracked cuBLAS workspace. */
#include "gru_fused.h"

#include "../kernels/runtime/cuda_track.h" /* CUBLAS_WORKSPACE_BYTES: a constant, no CUDA needed */
#include <limits.h>

mem_formula cuda_gru_memory(const gru_dims *d, const gru_opts *o)
{
    mem_formula m = cpu_gru_memory(d, o);
    m.forward_live = size_add(m.forward_live, CUBLAS_WORKSPACE_BYTES);
    m.peak = size_add(m.peak, CUBLAS_WORKSPACE_BYTES);
    m.allocs = 15;
    return m;
}

mem_formula cuda_gru_persistent_memory(const gru_dims *d)
{
    mem_formula m = gru_memory_of(d, gru_saved_arena_bytes(d));
    m.forward_live = size_add(m.forward_live, CUBLAS_WORKSPACE_BYTES);
    m.peak = size_add(m.peak, CUBLAS_WORKSPACE_BYTES);
    m.allocs = 15;
    return m;
}

const char *cuda_gru_unfit(const gru_dims *d, const gru_opts *o)
{
    size_t rows = size_mul(gru_steps_saved(d, o), d->B), widest = d->X > 6 * d->H ? d->X : 6 * d->H;
    if (size_mul(rows, widest) > INT_MAX || size_mul(d->T, d->B) > INT_MAX || size_mul(d->B, d->H) > INT_MAX)
        return "a GEMM dimension or a kernel's element count exceeds int";
    return NULL;
}
