/* maxsim_v3.cu - lesson 3, cuda-v3: v2's score slab on tensor cores (TF32 WMMA).
 * Changed from v2: a 64 x 64 tile's scores come from WMMA m16n16k8 TF32 fragments, 2 x 2 per warp, stored to
 * a padded shared tile that two threads per row fold into (max, argmax); float4 loads when K % 4 == 0; blocks
 * m outer, i inner, so b[m] stays in L2. The 1/8-grid inputs are exact in TF32: scores equal v2's bit for bit
 * (real data may flip an argmax: lesson-3-appendix.md). Backward: v1's (ms1_grads). */
#include <mma.h>

#include "maxsim.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_track.h"
#include "runtime/launch.h"

#include <math.h>

using namespace nvcuda;

#define LDS (MS3_TK + MS3_PAD) /* staged rows of a and b: 36 floats */
#define LDC (MS3_TN + MS3_PAD) /* the score tile's rows: 68 floats */

static_assert(MS3_THREADS == 128 && MS3_TJ == 64 && MS3_TN == 64,
              "4 warps, each a 32 x 32 quarter of the tile");
static_assert(MS3_TK % 8 == 0 && MS3_TK % 4 == 0, "k steps of 8 (m16n16k8), float4 staging");
static_assert(LDS % 4 == 0 && LDC % 4 == 0, "WMMA ldm: a multiple of 16 bytes");
static_assert((16 * LDS * 4) % 32 == 0 && (16 * LDC * 4) % 32 == 0, "every fragment pointer 32-byte aligned");
static_assert(LDS % 32 == 4, "a 4-float skew: 8 lanes' float4 stores of one row hit 32 distinct banks");
static_assert(MS3_THREADS == 2 * MS3_TJ, "two threads per row in the epilogue");

/* x rows [r0, r0+64) and columns [k0, k0+32) -> s[rr * LDS + kk], rounded to tf32; zeros outside rows x K.
 * x is (rows, K). When K % 4 == 0 every row segment is 16-byte aligned: float4 loads and stores. */
__device__ static void v3_stage(const float *x, int rows, int K, int r0, int k0, float *s)
{
    if (K % 4 == 0) {
        for (int e = threadIdx.x; e < MS3_TJ * MS3_TK / 4; e += MS3_THREADS) {
            int rr = e / (MS3_TK / 4), kk = e % (MS3_TK / 4) * 4, r = r0 + rr, k = k0 + kk;
            float4 v = {0.0f, 0.0f, 0.0f, 0.0f};
            if (r < rows && k < K) v = *(const float4 *)(x + (long long)r * K + k);
            float4 t = {wmma::__float_to_tf32(v.x), wmma::__float_to_tf32(v.y), wmma::__float_to_tf32(v.z),
                        wmma::__float_to_tf32(v.w)};
            *(float4 *)(s + rr * LDS + kk) = t;
        }
    } else {
        for (int e = threadIdx.x; e < MS3_TJ * MS3_TK; e += MS3_THREADS) {
            int rr = e / MS3_TK, kk = e % MS3_TK, r = r0 + rr, k = k0 + kk;
            s[rr * LDS + kk] = wmma::__float_to_tf32(r < rows && k < K ? x[(long long)r * K + k] : 0.0f);
        }
    }
}

/* sC [64][LDC] = a[i, j0 .. j0+64) . b[m, n0 .. n0+64)^T over all K (zeros past J, N, K). Warp w owns rows
 * 32 (w / 2) .. +32 and columns 32 (w % 2) .. +32 of the tile. */
__device__ static void v3_scores(const float *ai, const float *bm, int J, int N, int K, int j0, int n0,
                                 float *sA, float *sB, float *sC)
{
    int w = threadIdx.x / 32, wr = w / 2 * 32, wc = w % 2 * 32;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> c[2][2];
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa[2];
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb[2]; /* sB[n][k] */
    for (int x = 0; x < 2; x++)
        for (int y = 0; y < 2; y++) wmma::fill_fragment(c[x][y], 0.0f);
    for (int k0 = 0; k0 < K; k0 += MS3_TK) {
        v3_stage(ai, J, K, j0, k0, sA);
        v3_stage(bm, N, K, n0, k0, sB);
        __syncthreads(); /* the staged tiles are complete before any warp loads a fragment */
        for (int kk = 0; kk < MS3_TK; kk += 8) {
            for (int x = 0; x < 2; x++) wmma::load_matrix_sync(fa[x], sA + (wr + 16 * x) * LDS + kk, LDS);
            for (int y = 0; y < 2; y++) wmma::load_matrix_sync(fb[y], sB + (wc + 16 * y) * LDS + kk, LDS);
            for (int x = 0; x < 2; x++)
                for (int y = 0; y < 2; y++) wmma::mma_sync(c[x][y], fa[x], fb[y], c[x][y]);
        }
        __syncthreads(); /* every warp has loaded its fragments before the next k step restages */
    }
    for (int x = 0; x < 2; x++)
        for (int y = 0; y < 2; y++)
            wmma::store_matrix_sync(sC + (wr + 16 * x) * LDC + wc + 16 * y, c[x][y], LDC,
                                    wmma::mem_row_major);
    __syncthreads(); /* the score tile is complete before the epilogue reads it */
}

/* Thread t folds row t % 64, columns 32 (t / 64) .. +32 of the score tile into (best, bn). The column order
 * rotates with the lane (conflict-free reads); the rule is a total order, so the order does not matter. */
__device__ static void v3_fold(const float *sC, int n0, int N, float *best, int *bn)
{
    int row = threadIdx.x % MS3_TJ, side = threadIdx.x / MS3_TJ, lane = threadIdx.x % 32;
    for (int s = 0; s < 32; s++) {
        int col = side * 32 + (s + lane) % 32, n = n0 + col;
        float v = sC[row * LDC + col];
        if (n < N && ms_better_f(v, n, *best, *bn)) *best = v, *bn = n;
    }
}

/* One 64-row j tile against all of b[m]: each row's (max, argmax) into rowmax and (if kept) arg. */
__device__ static void v3_j_tile(const float *ai, const float *bm, int J, int N, int K, int j0, float *sA,
                                 float *sB, float *sC, float *rowmax, int *rowarg, int *argrow, int M)
{
    float best = -INFINITY;
    int bn = 0; /* a real column: see ms_better */
    for (int n0 = 0; n0 < N; n0 += MS3_TN) {
        v3_scores(ai, bm, J, N, K, j0, n0, sA, sB, sC);
        v3_fold(sC, n0, N, &best, &bn);
        __syncthreads(); /* the tile is read before the next n tile's scores overwrite it */
    }
    int row = threadIdx.x % MS3_TJ;
    if (threadIdx.x >= MS3_TJ) rowmax[row] = best, rowarg[row] = bn;
    __syncthreads(); /* the second halves are in shared memory */
    if (threadIdx.x < MS3_TJ) {
        if (ms_better_f(rowmax[row], rowarg[row], best, bn)) best = rowmax[row], bn = rowarg[row];
        rowmax[row] = best;
        if (argrow && j0 + row < J) argrow[(long long)(j0 + row) * M] = bn;
    }
    __syncthreads(); /* rowmax holds the merged maxima */
}

__global__ void ms_forward_v3(int I, int J, int M, int N, int K, const float *a, const float *b, float *out,
                              int *arg)
{
    __shared__ __align__(32) float sA[MS3_TJ * LDS], sB[MS3_TN * LDS], sC[MS3_TJ * LDC];
    __shared__ float rowmax[MS3_TJ];
    __shared__ int rowarg[MS3_TJ];
    /* i inner: b[m] stays in L2 */
    int m = blockIdx.x / I, i = blockIdx.x % I;
    const float *ai = a + (long long)i * J * K, *bm = b + (long long)m * N * K; /* a[i] (J, K), b[m] (N, K) */
    int *argrow = arg ? arg + (long long)i * J * M + m : 0;                       /* arg[i, :, m], stride M */
    float sum = 0.0f;
    for (int j0 = 0; j0 < J; j0 += MS3_TJ) {
        v3_j_tile(ai, bm, J, N, K, j0, sA, sB, sC, rowmax, rowarg, argrow, M);
        if (threadIdx.x == 0)
            /* j ascending, as the CPU */
            for (int jj = 0; jj < MS3_TJ && j0 + jj < J; jj++) sum += rowmax[jj];
        __syncthreads(); /* thread 0 has read rowmax before the next j tile rewrites it */
    }
    if (threadIdx.x == 0 && out) out[(long long)i * M + m] = sum;
}

/* out may be NULL (recompute), arg may be NULL (--recompute forward) */
static void launch_forward(const ms_dims *d, const float *a, const float *b, float *out, int *arg)
{
    int I = (int)d->I, J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K;
    LAUNCH(ms_forward_v3, I * M, MS3_THREADS, 0)(I, J, M, N, K, a, b, out, arg);
    CUDA_CHECK_LAST();
}

extern "C" float *ms3_forward(const ms_dims *d, const float *a, const float *b, int recompute,
                              int deterministic, cuda_ms_saved *s)
{
    float *out = (float *)dev_alloc_array(ms_out_count(d), DT_F32, "out [I,M] f32"); /* [I, M] */
    int *arg =
        recompute ? NULL
                  : (int *)dev_alloc_array(ms_arg_count(d), DT_I32, "arg [I,J,M] int32 (saved for backward)");
    launch_forward(d, a, b, out, arg);
    s->arg = (int32_t *)arg, s->recompute = recompute, s->deterministic = deterministic, s->f16 = 0;
    return out;
}

/* with --recompute this version's forward runs again into a transient argmax; then v1's gradients */
extern "C" void ms3_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s,
                             const float *dout, float **da, float **db)
{
    int *arg = (int *)s->arg; /* [I, J, M] */
    if (!arg) {
        arg = (int *)dev_alloc_array(ms_arg_count(d), DT_I32, "arg [I,J,M] int32 (recomputed in backward)");
        launch_forward(d, a, b, NULL, arg);
    }
    s->arg = NULL;
    ms1_grads(d, a, b, s->deterministic, arg, dout, da, db);
}
