/* maxsim_v4.cu - lesson 3, cuda-v4: v3's tensor cores fed by a pipeline, a[i]'s rows kept on chip.
 *
 * v3 re-stages both operands for every (j, n) tile pair and waits on each copy. Here one block per (i, m) keeps
 * 128 rows of a[i] in shared memory while b[m] streams past them through a 3-stage cp.async pipeline, and the
 * scores never leave the registers (kernels/maxsim_pipeline.h: the pipeline, the fragments, the merge). Each
 * score is folded into its slot's running (max, argmax) by ms_better's rule itself, column by column.
 * Design target: >= 50% of the H100's TF32 tensor-core roofline by the time model at the forum size. */
#include "maxsim_launch.h"
#include "maxsim_pipeline.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_fit.h"

/* Each slot's best score and its column, folded by the rule: a score's column n, then ms_better_f. */
struct v4_fold {
    float best[4][8];
    int n[4][8];

    __device__ void init(int)
    {
        UNROLL for (int x = 0; x < 4; x++)
            UNROLL for (int q = 0; q < 8; q++) best[x][q] = -INFINITY, n[x][q] = 0; /* a real column: ms_better */
    }
    /* the warp's finished 64 x 64 scores (columns n0 ..) into best/n per (row group x, slot q), then clears them
     * for the next n tile; a slot's row is the same in every fragment of a row group */
    __device__ void fold(acc_frag (&c)[4][4], const unsigned (&pos)[2], int n0, int N)
    {
        UNROLL for (int x = 0; x < 4; x++)
            UNROLL for (int y = 0; y < 4; y++) {
                UNROLL for (int q = 0; q < 8; q++) {
                    int col = n0 + 16 * y + pipe_pos(pos, q) % 16;
                    float v = c[x][y].x[q];
                    if (col < N && ms_better_f(v, col, best[x][q], n[x][q])) best[x][q] = v, n[x][q] = col;
                }
                wmma::fill_fragment(c[x][y], 0.0f);
            }
    }
    __device__ void columns(const unsigned (&)[2]) {}
};

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 12.5% (arg[i, :, m] is a column, stride M, as
 * in v3), shared memory <= 2 wavefronts per request (fragment loads conflict-free; a stage's 16-byte copies put
 * rows 20 floats apart, two rows per quarter-warp: 2-way; the merge by lane: conflict-free).
 * Today: loads 70% (K = 25 here: the 4-byte copies, each row's stage mid-sector), shared memory <= 4 wavefronts per
 * request (pipe_fragment_positions' one load of an unpadded 16 x 16 tile per block: 4-way; the pipeline's: 1). */
__global__ void ms_forward_v4(int I, int J, int M, int N, int K, const float *a, const float *b, float *out, int *arg)
{
    pipe_forward<4, v4_fold>(I, J, M, N, K, a, b, out, arg);
}

/* NULL when K <= 256 and this GPU fits the launch (kernels/runtime/cuda_fit.h) */
extern "C" const char *ms4_unfit(const ms_dims *d)
{
    if (d->K > 256)
        return "K above 256: cuda-v4 keeps a[i]'s 128 rows of K floats in shared memory (cuda-v3 runs any K)";
    const cuda_launch_need need = {(const void *)ms_forward_v4, MS4_THREADS, (size_t)ms4_smem_bytes((long long)d->K), 80, 0};
    return cuda_fit(&need, 1);
}

void ms4_forward(const ms_dims *d, const float *a, const float *b, float *out, int *arg)
{
    int I = (int)d->I, J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K;
    int smem = (int)ms4_smem_bytes(K); /* within the device's opt-in: ms4_unfit */
    CUDA_CHECK(cudaFuncSetAttribute(ms_forward_v4, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    LAUNCH(ms_forward_v4, I * M, MS4_THREADS, smem)(I, J, M, N, K, a, b, out, arg);
    CUDA_CHECK_LAST();
}
