/* maxsim_v6.cu - lesson 3, cuda-v6: v5 with twice the warps per block, each half the rows.
 *
 * v5 is latency-bound: its 4 warps of 64 x 64 each hold 16 accumulator fragments, and at the forum's K = 256 a
 * block's shared memory leaves one block per SM, one warp per scheduler, so every dependent instruction waits its
 * whole latency (the measurements: docs/lesson-3.md). Here the block's 8 warps each own
 * 32 x 64 of the same 128 x 128 score tile (2 x 4 fragments: half the accumulators, half the registers), so a
 * scheduler has two warps to issue from where v5 had one; the shared memory, the pipeline, the fold
 * (kernels/maxsim_ordered_fold.h) and the merge are v5's. The cost: each warp loads its own a fragments, so a
 * stage's fragment loads per multiply go from 1/2 to 3/4.
 * Design target: >= 50% of the H100's TF32 tensor-core roofline by the time model at the forum size. */
#include "maxsim_launch.h"
#include "maxsim_ordered_fold.h"
#include "maxsim_pipeline.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_fit.h"

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 12.5% (arg[i, :, m] is a column, stride M, as
 * in v3), shared memory <= 2 wavefronts per request (fragment loads conflict-free; a stage's 16-byte copies put
 * rows 20 floats apart, two rows per quarter-warp: 2-way; the merge by lane: conflict-free).
 * Today: loads 70% (K = 25 here: the 4-byte copies, each row's stage mid-sector), shared memory <= 4 wavefronts per
 * request (pipe_fragment_positions' one load of an unpadded 16 x 16 tile per block: 4-way; the pipeline's: 1). */
__global__ void ms_forward_v6(int I, int J, int M, int N, int K, const float *a, const float *b, float *out, int *arg)
{
    pipe_forward<2, ordered_fold<2>>(I, J, M, N, K, a, b, out, arg);
}

/* NULL when K <= 256 and this GPU fits the launch (kernels/runtime/cuda_fit.h) */
extern "C" const char *ms6_unfit(const ms_dims *d)
{
    if (d->K > 256)
        return "K above 256: cuda-v6 keeps a[i]'s 128 rows of K floats in shared memory (cuda-v3 runs any K)";
    const cuda_launch_need need = {(const void *)ms_forward_v6, pipe_block<2>::threads, (size_t)ms4_smem_bytes((long long)d->K), 80, 0};
    return cuda_fit(&need, 1);
}

void ms6_forward(const ms_dims *d, const float *a, const float *b, float *out, int *arg)
{
    int I = (int)d->I, J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K;
    int smem = (int)ms4_smem_bytes(K); /* v4's shared memory, within the opt-in: ms6_unfit */
    CUDA_CHECK(cudaFuncSetAttribute(ms_forward_v6, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    LAUNCH(ms_forward_v6, I * M, pipe_block<2>::threads, smem)(I, J, M, N, K, a, b, out, arg);
    CUDA_CHECK_LAST();
}
