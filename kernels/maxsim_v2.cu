/* maxsim_v2.cu - lesson 3, cuda-v2: v1's loops as a tiled GEMM with a max/argmax epilogue.
 * Changed from v1: one block per (i, m) computes the [J, N] slab a[i] . b[m]^T in 64 x 64 tiles, K in steps
 * of 16 staged in shared memory, a 4 x 4 register tile per thread (each staged value used 64 times); the
 * epilogue folds the scores into a running (max, argmax) per row, merged by warp shuffles, and the block sums
 * the row maxima over j in order. Backward: v1's (ms1_grads). */
#include "maxsim.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_track.h"
#include "runtime/launch.h"

#include <math.h>

static_assert(MS_THREADS == 256, "v2's loads assume 256 threads: 64x16 tile elements = 4 per thread");
static_assert(MS_TN / MS_RN == 16, "a row's 16 partial argmaxes merge with shuffles inside half a warp");
static_assert((MS_TJ * MS_TK) % MS_THREADS == 0 && (MS_TN * MS_TK) % MS_THREADS == 0, "tiles load evenly");

/* v2's shared tiles are [MS_TK][MS_TJ + MS_PAD]. load_tiles' warp stores 2 columns x 16 rows; with rows of 64
 * floats the 16 words of a column all sit in one bank (a 16-way conflict). A row of 66 floats moves each row
 * 2 banks on: one column covers the 16 even offsets, the next the 16 odd ones, 32 banks (conflict-free). nvcc
 * reads the tiles one float at a time here, so the rows need no 16-byte alignment (a pad of 4 would keep it,
 * at 2-way). */
#define MS_PAD 2

/* Stage a[i, j0 .. j0+64, k0 .. k0+16) as sA[kk][jj] and b[m, n0 .. n0+64, k0 ..) as sB[kk][nn]; zeros
 * outside. */
__device__ static void load_tiles(const float *ai, const float *bm, int J, int N, int K, int j0, int n0,
                                  int k0, float (*sA)[MS_TJ + MS_PAD], float (*sB)[MS_TN + MS_PAD])
{
    for (int e = threadIdx.x; e < MS_TJ * MS_TK; e += MS_THREADS) {
        int jj = e / MS_TK, kk = e % MS_TK, j = j0 + jj, k = k0 + kk; /* consecutive threads: consecutive k */
        sA[kk][jj] = (j < J && k < K) ? ai[(long long)j * K + k] : 0.0f;
    }
    for (int e = threadIdx.x; e < MS_TN * MS_TK; e += MS_THREADS) {
        int nn = e / MS_TK, kk = e % MS_TK, n = n0 + nn, k = k0 + kk;
        sB[kk][nn] = (n < N && k < K) ? bm[(long long)n * K + k] : 0.0f;
    }
}

/* The 16 threads of a row group (same ty, tx = 0..15: 16 consecutive lanes) merge their (max, argmax). The
 * rule is a total order, so the merge order does not change the winner. Every lane of the warp takes part. */
__device__ static void merge_row(float *best, int *bn)
{
    for (int off = MS_TN / MS_RN / 2; off > 0; off /= 2) {
        float ov = __shfl_xor_sync(0xffffffffu, *best, off);
        int on = __shfl_xor_sync(0xffffffffu, *bn, off);
        if (ms_better_f(ov, on, *best, *bn)) *best = ov, *bn = on;
    }
}

/* One 64-row j tile: its [64, N] scores reduced to 64 (max, argmax), written to rowmax and (if kept) arg. */
__device__ static void j_tile(const float *ai, const float *bm, int J, int N, int K, int j0,
                              float (*sA)[MS_TJ + MS_PAD], float (*sB)[MS_TN + MS_PAD], float *rowmax,
                              int *argrow, int M)
{
    int tx = threadIdx.x % (MS_TN / MS_RN), ty = threadIdx.x / (MS_TN / MS_RN);
    float best[MS_RJ];
    int bn[MS_RJ];
    for (int rj = 0; rj < MS_RJ; rj++) best[rj] = -INFINITY, bn[rj] = 0; /* a real column: see ms_better */
    for (int n0 = 0; n0 < N; n0 += MS_TN) {
        float acc[MS_RJ][MS_RN] = {{0.0f}};
        for (int k0 = 0; k0 < K; k0 += MS_TK) {
            load_tiles(ai, bm, J, N, K, j0, n0, k0, sA, sB);
            __syncthreads(); /* the tiles are complete before anyone reads them */
            for (int kk = 0; kk < MS_TK; kk++)
                for (int rj = 0; rj < MS_RJ; rj++)
                    for (int rn = 0; rn < MS_RN; rn++)
                        acc[rj][rn] += sA[kk][ty * MS_RJ + rj] * sB[kk][tx * MS_RN + rn];
            __syncthreads(); /* everyone is done reading before the next k step overwrites the tiles */
        }
        for (int rj = 0; rj < MS_RJ; rj++)
            for (int rn = 0; rn < MS_RN; rn++) {
                int n = n0 + tx * MS_RN + rn;
                if (n < N && ms_better_f(acc[rj][rn], n, best[rj], bn[rj]))
                    best[rj] = acc[rj][rn], bn[rj] = n;
            }
    }
    for (int rj = 0; rj < MS_RJ; rj++) {
        merge_row(&best[rj], &bn[rj]);
        int jj = ty * MS_RJ + rj;
        if (tx == 0) {
            rowmax[jj] = best[rj];
            if (argrow && j0 + jj < J) argrow[(long long)(j0 + jj) * M] = bn[rj];
        }
    }
}

__global__ void ms_forward_v2(int I, int J, int M, int N, int K, const float *a, const float *b, float *out,
                              int *arg)
{
    __shared__ float sA[MS_TK][MS_TJ + MS_PAD], sB[MS_TK][MS_TN + MS_PAD], rowmax[MS_TJ];
    int i = blockIdx.x / M, m = blockIdx.x % M;
    const float *ai = a + (long long)i * J * K, *bm = b + (long long)m * N * K; /* a[i] (J, K), b[m] (N, K) */
    int *argrow = arg ? arg + (long long)i * J * M + m : 0;                       /* arg[i, :, m], stride M */
    float sum = 0.0f;
    (void)I;
    for (int j0 = 0; j0 < J; j0 += MS_TJ) {
        j_tile(ai, bm, J, N, K, j0, sA, sB, rowmax, argrow, M);
        __syncthreads(); /* rowmax is complete */
        if (threadIdx.x == 0)
            for (int jj = 0; jj < MS_TJ && j0 + jj < J; jj++) sum += rowmax[jj]; /* j ascending, as the CPU */
        __syncthreads(); /* thread 0 has read rowmax before the next tile rewrites it */
    }
    if (threadIdx.x == 0 && out) out[blockIdx.x] = sum;
}

/* out may be NULL (recompute), arg may be NULL (--recompute forward) */
static void launch_forward(const ms_dims *d, const float *a, const float *b, float *out, int *arg)
{
    int I = (int)d->I, J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K;
    LAUNCH(ms_forward_v2, I * M, MS_THREADS, 0)(I, J, M, N, K, a, b, out, arg);
    CUDA_CHECK_LAST();
}

extern "C" float *ms2_forward(const ms_dims *d, const float *a, const float *b, int recompute,
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
extern "C" void ms2_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s,
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
