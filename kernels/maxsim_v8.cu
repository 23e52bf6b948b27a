/* maxsim_v8.cu - lesson 3, cuda-v8: v7 on score tiles twice as wide, so each of its 8 warps owns 64 x 64 scores.
 *
 * v7's warps own 32 x 64 scores each: for every 2048 multiply-adds per k a warp loads 96 fragment words from
 * shared memory, and the SM's shared-memory path (one 128-byte wavefront per clock) then takes longer than its
 * tensor cores. A 64 x 64 warp tile loads 128 words for 4096: a third fewer per multiply-add. v5 had such warps
 * but only 4 of them, one per scheduler; here the score tile is 128 x 256, so 8 warps of 64 x 64 fill it, two per
 * scheduler (pipe_block<4, 4, 32, 2, MS8_LDA>, maxsim_pipeline.h). Two more changes, each where v7's SASS spent
 * instructions: a stage holds 32 columns of K, so each row of b a copy reads is one whole 128-byte line, and the
 * walk through the stages (kernels/maxsim_row_walk.h) steps counters where v7 divides by the stage count, with
 * each thread's rows of b fixed. The loads and the fold are v7's (maxsim_shared_loads.h, maxsim_ordered_fold.h).
 * Shared memory: a[i]'s 128 rows 260 floats apart whatever K, and 2 stages of 256 rows of 36 floats: 206,848
 * bytes, within sm_90's 227 KB opt-in, above sm_80's 163 KB (there ms8_unfit refuses through cuda_fit, and v7
 * runs).
 * Design target: >= 50% of the H100's TF32 tensor-core roofline by the time model at the forum size. */
#include "maxsim_launch.h"
#include "maxsim_ordered_fold.h"
#include "maxsim_pipeline.h"
#include "maxsim_row_walk.h"
#include "maxsim_shared_loads.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_fit.h"

#include <stdint.h>
#include <stdio.h>

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 12.5% (arg[i, :, m] is a column, stride M, as
 * in v3), shared memory <= 2 wavefronts per request (the fragment loads conflict-free, as v7's: rows 36 floats
 * apart in a stage, 260 in a[i]'s; a quarter-warp's 16-byte copies write one row's 128 bytes).
 * Today: loads 78% (K = 25 here: the 4-byte copies, each row's 25 floats mid-sector), shared memory <= 4
 * wavefronts per request (pipe_fragment_positions' one load of an unpadded 16 x 16 tile per block: 4-way). */
__global__ void ms_forward_v8(int I, int J, int M, int N, int K, const float *a, const float *b, float *out, int *arg)
{
    pipe_forward<4, ordered_fold<4>, shared_loads, v8_block, row_walk<v8_block>>(I, J, M, N, K, a, b, out, arg);
}

extern "C" const char *ms8_unfit(const ms_dims *d)
{
    if (d->K > 256) return "K above 256: cuda-v8 keeps a[i]'s 128 rows of K floats in shared memory (cuda-v3 runs any K)";
    if (((long long)d->N + MS8_TN) * (long long)d->K > INT32_MAX)
        return "(N + 256) * K above 2^31 - 1: cuda-v8's copies index b[m] in int (cuda-v3 runs any size)";
    const cuda_launch_need need = {(const void *)ms_forward_v8, v8_block::threads, MS8_SMEM_BYTES, 80, 0};
    return cuda_fit(&need, 1);
}

void ms8_forward(const ms_dims *d, const float *a, const float *b, float *out, int *arg)
{
    int I = (int)d->I, J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K;
    /* within the device's limits: ms8_unfit (cuda_fit) */
    CUDA_CHECK(cudaFuncSetAttribute(ms_forward_v8, cudaFuncAttributeMaxDynamicSharedMemorySize, MS8_SMEM_BYTES));
    LAUNCH(ms_forward_v8, I * M, v8_block::threads, MS8_SMEM_BYTES)(I, J, M, N, K, a, b, out, arg);
    CUDA_CHECK_LAST();
}
