/* maxsim_v5.cu - lesson 3, cuda-v5: v4 with a fold of a few instructions per score.
 *
 * v4 folds each score by ms_better's rule itself: the score's column (a decode of its fragment position), a bound
 * check, then the rule's NaN and tie branches -- per score, about as many instructions as its share of the tensor
 * cores' work, and nvcc's SASS spends them on 128 scores per lane per n tile. Here the rule is met by the order of
 * the fold instead: a slot sees its columns in increasing order (n tiles ascending, then its four fragments), so
 * a later score wins only if it is greater, or NaN over a number (ms_later_wins, maxsim_math.h: two compares),
 * and two selects keep it. The slot keeps the first column of the
 * fragment where its best came from (n0 + 16y, the same for the whole warp); the element's own column within the
 * fragment is added once per j tile, before the merge. Only the last n tile, where columns may pass N, checks
 * them. The pipeline, the fragments and the merge are v4's (kernels/maxsim_pipeline.h).
 * Design target: >= 50% of the H100's TF32 tensor-core roofline by the time model at the forum size. */
#include "maxsim_launch.h"
#include "maxsim_pipeline.h"

#include "runtime/cuda_check.h"

/* Each slot's best score and the first column of the fragment it came from. */
struct v5_fold {
    float best[4][8];
    int n[4][8];

    /* the first column of the slot's first fragment: where -Inf everywhere (no score wins) leaves the argmax, the
     * slot's lowest column, as the rule wants */
    __device__ void init(int wc)
    {
        UNROLL for (int x = 0; x < 4; x++)
            UNROLL for (int q = 0; q < 8; q++) best[x][q] = -INFINITY, n[x][q] = wc;
    }
    /* the warp's finished 64 x 64 scores (columns n0 ..), then clears them for the next n tile; EDGE: some columns
     * may pass N (the last n tile), and those are checked */
    template <bool EDGE> __device__ void fold_tile(acc_frag (&c)[4][4], const unsigned (&pos)[2], int n0, int N)
    {
        UNROLL for (int x = 0; x < 4; x++)
            UNROLL for (int y = 0; y < 4; y++) {
                UNROLL for (int q = 0; q < 8; q++) {
                    float v = c[x][y].x[q];
                    int keep = ms_later_wins(v, best[x][q]) & (!EDGE | (n0 + 16 * y + pipe_pos(pos, q) % 16 < N));
                    best[x][q] = keep ? v : best[x][q];
                    n[x][q] = keep ? n0 + 16 * y : n[x][q];
                }
                wmma::fill_fragment(c[x][y], 0.0f);
            }
    }
    __device__ void fold(acc_frag (&c)[4][4], const unsigned (&pos)[2], int n0, int N)
    {
        if (n0 + 64 <= N) /* uniform across the warp */
            fold_tile<false>(c, pos, n0, N);
        else
            fold_tile<true>(c, pos, n0, N);
    }
    /* each slot's column: its fragment's first column plus the element's column within the fragment */
    __device__ void columns(const unsigned (&pos)[2])
    {
        UNROLL for (int x = 0; x < 4; x++)
            UNROLL for (int q = 0; q < 8; q++) n[x][q] += pipe_pos(pos, q) % 16;
    }
};

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 12.5% (arg[i, :, m] is a column, stride M, as
 * in v3), shared memory <= 2 wavefronts per request (fragment loads conflict-free; a stage's 16-byte copies put
 * rows 20 floats apart, two rows per quarter-warp: 2-way; the merge by lane: conflict-free).
 * Today: loads 70% (K = 25 here: the 4-byte copies, each row's stage mid-sector), shared memory <= 4 wavefronts per
 * request (pipe_fragment_positions' one load of an unpadded 16 x 16 tile per block: 4-way; the pipeline's: 1). */
__global__ void ms_forward_v5(int I, int J, int M, int N, int K, const float *a, const float *b, float *out, int *arg)
{
    pipe_forward<v5_fold>(I, J, M, N, K, a, b, out, arg);
}

void ms5_forward(const ms_dims *d, const float *a, const float *b, float *out, int *arg)
{
    int I = (int)d->I, J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K;
    int smem = (int)ms4_smem_bytes(K); /* v4's shared memory: cuda_ms4_unfit keeps it within MS4_SMEM_LIMIT */
    CUDA_CHECK(cudaFuncSetAttribute(ms_forward_v5, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    LAUNCH(ms_forward_v5, I * M, MS4_THREADS, smem)(I, J, M, N, K, a, b, out, arg);
    CUDA_CHECK_LAST();
}
