/* maxsim_v7.cu - lesson 3, cuda-v7: v6 with its fragments filled by plain shared-memory loads.
 *
 * v6 is bound by the instructions it issues, and a large share of them are its fragments' element loads: nvcc
 * compiles wmma::load_matrix_sync on a shared tile to a load through a generic pointer per element, each with a
 * 64-bit address computation of its own (the counts: docs/lesson-3.md). Here each lane learns once where its
 * fragment elements sit in a tile (kernels/maxsim_shared_loads.h) and loads them with ordinary shared loads;
 * everything else is v6's.
 * Design target: >= 50% of the H100's TF32 tensor-core roofline by the time model at the forum size. */
#include "maxsim_launch.h"
#include "maxsim_ordered_fold.h"
#include "maxsim_pipeline.h"
#include "maxsim_shared_loads.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_fit.h"

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 12.5% (arg[i, :, m] is a column, stride M, as
 * in v3), shared memory <= 2 wavefronts per request (the fragment loads conflict-free: in a b stage a load's lanes
 * cover rows n .. n+8 at LDB = 20 words, 4 consecutive columns each; a's rows lda = 4 or 20 words mod 32 apart).
 * Today: loads 70% (K = 25 here: the 4-byte copies, each row's stage mid-sector), shared memory <= 4 wavefronts per
 * request (pipe_fragment_positions' one load of an unpadded 16 x 16 tile per block: 4-way; the pipeline's: 1). */
__global__ void ms_forward_v7(int I, int J, int M, int N, int K, const float *a, const float *b, float *out, int *arg)
{
    pipe_forward<2, ordered_fold<2>, shared_loads>(I, J, M, N, K, a, b, out, arg);
}

/* NULL when K <= 256 and this GPU fits the launch (kernels/runtime/cuda_fit.h) */
extern "C" const char *ms7_unfit(const ms_dims *d)
{
    if (d->K > 256)
        return "K above 256: cuda-v7 keeps a[i]'s 128 rows of K floats in shared memory (cuda-v3 runs any K)";
    const cuda_launch_need need = {(const void *)ms_forward_v7, pipe_block<2>::threads, (size_t)ms4_smem_bytes((long long)d->K), 80, 0};
    return cuda_fit(&need, 1);
}

void ms7_forward(const ms_dims *d, const float *a, const float *b, float *out, int *arg)
{
    int I = (int)d->I, J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K;
    int smem = (int)ms4_smem_bytes(K); /* v4's shared memory, within the opt-in: ms7_unfit */
    CUDA_CHECK(cudaFuncSetAttribute(ms_forward_v7, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    LAUNCH(ms_forward_v7, I * M, pipe_block<2>::threads, smem)(I, J, M, N, K, a, b, out, arg);
    CUDA_CHECK_LAST();
}
