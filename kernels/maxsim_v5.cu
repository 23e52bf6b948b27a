/* maxsim_v5.cu - lesson 3, cuda-v5: v4 with a fold of a few instructions per score.
 *
 * v4 folds each score by ms_better's rule itself: the score's column (a decode of its fragment position), a bound
 * check, then the rule's NaN and tie branches -- per score, about as many instructions as its share of the tensor
 * cores' work, and nvcc's SASS spends them on 128 scores per lane per n tile. Here the rule is met by the order of
 * the fold instead (kernels/maxsim_ordered_fold.h): two compares and two selects per score, the argmax column
 * added once per j tile. The pipeline, the fragments and the merge are v4's (kernels/maxsim_pipeline.h).
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
__global__ void ms_forward_v5(int I, int J, int M, int N, int K, const float *a, const float *b, float *out, int *arg)
{
    pipe_forward<4, ordered_fold<4>>(I, J, M, N, K, a, b, out, arg);
}

/* NULL when K <= 256 and this GPU fits the launch (kernels/runtime/cuda_fit.h) */
extern "C" const char *ms5_unfit(const ms_dims *d)
{
    if (d->K > 256)
        return "K above 256: cuda-v5 keeps a[i]'s 128 rows of K floats in shared memory (cuda-v3 runs any K)";
    const cuda_launch_need need = {(const void *)ms_forward_v5, MS4_THREADS, (size_t)ms4_smem_bytes((long long)d->K), 80, 0};
    return cuda_fit(&need, 1);
}

void ms5_forward(const ms_dims *d, const float *a, const float *b, float *out, int *arg)
{
    int I = (int)d->I, J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K;
    int smem = (int)ms4_smem_bytes(K); /* v4's shared memory, within the opt-in: ms5_unfit */
    CUDA_CHECK(cudaFuncSetAttribute(ms_forward_v5, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    LAUNCH(ms_forward_v5, I * M, MS4_THREADS, smem)(I, J, M, N, K, a, b, out, arg);
    CUDA_CHECK_LAST();
}
