/* maxsim_v8.cu - lesson 3, cuda-v8: v7 on score tiles twice as wide, so each of its 8 warps owns 64 x 64 scores.
 *
 * v7's warps own 32 x 64 scores each: for every 2048 multiply-adds per k a warp loads 96 fragment words from
 * shared memory, and the SM's shared-memory path (one 128-byte wavefront per clock) then takes longer than its
 * tensor cores (the counts: docs/lesson-3.md). A 64 x 64 warp tile loads 128 words for 4096: a third fewer per
 * multiply-add. v5 had such warps but only 4 of them, one per scheduler, and waited on every latency; here the
 * score tile is 128 x 256, so 8 warps of 64 x 64 fill it, two per scheduler. The stages hold 256 rows of b, and
 * beside a[i]'s resident rows that needs 194,560 bytes of shared memory at K = 256: sm_90's 227 KB opt-in holds
 * it, sm_80's 163 KB does not (there, v8 takes K up to 192, and ms8_unfit says so). The loads, the fold and the
 * merge are v7's (kernels/maxsim_shared_loads.h, maxsim_ordered_fold.h, maxsim_pipeline.h).
 * Design target: >= 50% of the H100's TF32 tensor-core roofline by the time model at the forum size. */
#include "maxsim_launch.h"
#include "maxsim_ordered_fold.h"
#include "maxsim_pipeline.h"
#include "maxsim_row_walk.h"
#include "maxsim_shared_loads.h"

#include "runtime/cuda_check.h"

#include <stdint.h>
#include <stdio.h>

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 12.5% (arg[i, :, m] is a column, stride M, as
 * in v3), shared memory <= 2 wavefronts per request (the fragment loads conflict-free, as v7's; a stage's 16-byte
 * copies: rows 20 floats apart).
 * Today: loads 70% (K = 25 here: the 4-byte copies, each row's stage mid-sector), shared memory <= 4 wavefronts per
 * request (pipe_fragment_positions' one load of an unpadded 16 x 16 tile per block: 4-way; the pipeline's: 1). */
__global__ void ms_forward_v8(int I, int J, int M, int N, int K, const float *a, const float *b, float *out, int *arg)
{
    pipe_forward<4, ordered_fold<4>, shared_loads, v8_block, row_walk<v8_block>>(I, J, M, N, K, a, b, out, arg);
}

extern "C" const char *ms8_unfit(const ms_dims *d)
{
    static char why[200];
    int optin = 0;
    if (d->K > 256) return "K above 256: cuda-v8 keeps a[i]'s 128 rows of K floats in shared memory (cuda-v3 runs any K)";
    if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        return "no CUDA device to ask for its shared memory per block";
    }
    if (((long long)d->N + MS8_TN) * (long long)d->K > INT32_MAX)
        return "(N + 256) * K above 2^31 - 1: cuda-v8's copies index b[m] in int (cuda-v3 runs any size)";
    if (MS8_SMEM_BYTES <= optin) return NULL;
    snprintf(why, sizeof why, "cuda-v8 needs %d bytes of shared memory per block (sm_90 allows 232448); this device "
             "allows %d (sm_80: 166912, where cuda-v7 runs)", MS8_SMEM_BYTES, optin);
    return why;
}

void ms8_forward(const ms_dims *d, const float *a, const float *b, float *out, int *arg)
{
    int I = (int)d->I, J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K;
    /* ms8_unfit checks the device's opt-in limit */
    CUDA_CHECK(cudaFuncSetAttribute(ms_forward_v8, cudaFuncAttributeMaxDynamicSharedMemorySize, MS8_SMEM_BYTES));
    LAUNCH(ms_forward_v8, I * M, v8_block::threads, MS8_SMEM_BYTES)(I, J, M, N, K, a, b, out, arg);
    CUDA_CHECK_LAST();
}
