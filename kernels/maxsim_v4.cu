/* maxsim_v4.cu - lesson 3, cuda-v4: v3's TF32 tensor cores as mma.sync, fed from a cp.async ring.
 * Changed from v3: a[i]'s 64 rows stay in shared memory for a whole j tile while b[m] streams past them in
 * 4 stages of 64 rows x 32 columns, XOR-swizzled so ldmatrix reads them without bank conflicts; each operand
 * is rounded to TF32 once, where it lands; the next k step's fragments load while this one multiplies; the
 * max over n is taken on the accumulator registers (one max per score, the argmax rescanned only in a tile
 * that beats the running best). Same products and sums as v3: the same scores. Backward: v1's (ms1_grads). */
#include <mma_ptx.h>

#include "maxsim.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_track.h"
#include "runtime/cuda_fit.h"
#include "runtime/hd.h"
#include "runtime/launch.h"

#include <math.h>
#include <stdint.h>

#define V4_TJ 64 /* rows of a[i] resident: a j tile */
#define V4_TN 64 /* rows of b[m] a stage holds: an n tile */
#define V4_TK 32 /* columns of K a stage holds: one 128-byte row segment per row */
#define V4_STAGES 4 /* the ring: three stages in flight while the warps multiply the fourth */
#define V4_THREADS 128 /* 4 warps, 2 x 2, each 32 x 32 scores: 2 m16 tiles x 4 n8 tiles */
#define V4_KMAX 256 /* a[i]'s tile is 64 x K floats: 64 KB at K = 256, beside the ring's 32 KB */

static_assert(V4_TK == 32, "a row segment is 8 chunks of 16 bytes: the swizzle's XOR takes 3 bits");
static_assert(V4_THREADS == 4 * 32 && V4_TJ == 2 * 32 && V4_TN == 2 * 32, "2 x 2 warps of 32 x 32 scores");

/* K rounded up to whole stages: the columns a[i]'s tile holds (zeros past K, as v3's staging) */
HD long long ms4_k_padded(long long K) { return (K + V4_TK - 1) / V4_TK * V4_TK; }
/* dynamic shared memory: a[i]'s tile, then the ring */
HD long long ms4_smem_bytes(long long K) { return 4 * (V4_TJ * ms4_k_padded(K) + V4_STAGES * V4_TN * V4_TK); }

/* Float offset of (row, k) in a tile whose rows are ld floats (ld % 32 == 0): chunk k / 4 of each 128-byte
 * segment moves to chunk (k / 4) ^ (row % 8). The 8 rows one ldmatrix matrix reads then hold the same chunk
 * in 8 different bank groups: one wavefront per matrix, where unswizzled rows would be 8-way. */
__device__ static int swz(int row, int k, int ld)
{
    return row * ld + (((k >> 2) ^ (row & 7)) << 2) + (k & 3);
}

/* Rows [r0, r0 + tile_rows) x columns [k0, k0 + width) of x (rows, K) into tile s (ld floats a row), each
 * thread a strided share of the 16-byte chunks: cp.async when the source is 16-byte aligned (K % 4 == 0),
 * else four plain loads; zeros past the rows and past K. */
__device__ static void copy_tile(float *s, int ld, const float *x, int rows, int K, int r0, int k0, int width,
                                 int tile_rows)
{
    int chunks = width / 4;
    for (int e = threadIdx.x; e < tile_rows * chunks; e += V4_THREADS) {
        int rr = e / chunks, kk = e % chunks * 4, k = k0 + kk;
        long long r = (long long)r0 + rr;
        float *dst = s + swz(rr, kk, ld);
        const float *src = x + r * K + k;
        if (r < rows && k < K && K % 4 == 0) {
            cp_async_16(dst, src);
        } else {
            float4 v = {0.0f, 0.0f, 0.0f, 0.0f};
            if (r < rows && k < K) v.x = src[0];
            if (r < rows && k + 1 < K) v.y = src[1];
            if (r < rows && k + 2 < K) v.z = src[2];
            if (r < rows && k + 3 < K) v.w = src[3];
            *(float4 *)dst = v;
        }
    }
}

/* The chunks this thread copied into tile s (copy_tile's share), rounded to TF32 in place: once per element,
 * after its copy landed, so the fragments need no conversion (v3's rounding, cvt.rna). */
__device__ static void round_tile(float *s, int ld, int width, int tile_rows)
{
    int chunks = width / 4;
    for (int e = threadIdx.x; e < tile_rows * chunks; e += V4_THREADS) {
        float4 *p = (float4 *)(s + swz(e / chunks, e % chunks * 4, ld));
        float4 v = *p;
        v.x = __uint_as_float(f32_to_tf32(v.x)), v.y = __uint_as_float(f32_to_tf32(v.y));
        v.z = __uint_as_float(f32_to_tf32(v.z)), v.w = __uint_as_float(f32_to_tf32(v.w));
        *p = v;
    }
}

/* One k step's fragments of this warp: a's 2 m16 tiles (rows wr ..) at column ka of a[i]'s tile, b's 4 n8
 * tiles (rows wc .. of the stage) at column kb. ldmatrix on 32-bit data: a 16-byte row is 4 floats and lane
 * 4g + t receives float t of row g of each 8 x 4 matrix -- exactly the m16n8k8 tf32 fragment (mma_ptx.h). */
struct v4_frags {
    uint32_t a[2][4], b[4][2];
};
__device__ static void load_frags(v4_frags &f, const float *sa, int lda, int ka, const float *sb, int kb,
                                  int wr, int wc)
{
    int lane = threadIdx.x % 32, r8 = lane % 8, hi = lane / 8 % 2, up = lane / 16;
    UNROLL for (int x = 0; x < 2; x++) /* matrices: rows 0-7 | 8-15, then k 0-3 | 4-7 */
        ldmatrix_x4(f.a[x][0], f.a[x][1], f.a[x][2], f.a[x][3],
                    sa + swz(wr + 16 * x + r8 + 8 * hi, ka + 4 * up, lda));
    UNROLL for (int y = 0; y < 4; y += 2) /* matrices: k 0-3 | 4-7 of n tile y, then of n tile y + 1 */
        ldmatrix_x4(f.b[y][0], f.b[y][1], f.b[y + 1][0], f.b[y + 1][1],
                    sb + swz(wc + 8 * y + r8 + 8 * up, kb + 4 * hi, V4_TK));
}

__device__ static void mma_step(float (&c)[2][4][4], const v4_frags &f)
{
    UNROLL for (int x = 0; x < 2; x++) UNROLL for (int y = 0; y < 4; y++)
        mma_tf32_m16n8k8(c[x][y], f.a[x], f.b[y], c[x][y]);
}

/* This lane's 4 rows (m tile x, row g + 8h) of the finished n tile n0 into their running (best, bn), then
 * zeroes the accumulators. A lane's columns, n0 + wc + 8y + 2t + e, rise with (y, e) and lie above every
 * column of earlier tiles, so one NaN-propagating max per score decides whether the tile can win at all
 * (ms_later_wins), and only then is it rescanned in column order for the winner. Columns past N: -Inf. */
__device__ static void fold_tile(float (&c)[2][4][4], float (&best)[4], int (&bn)[4], int n0, int wc, int N)
{
    int col0 = wc + 2 * (threadIdx.x % 4), left = N - n0; /* columns relative to n0: no int overflow */
    if (left < V4_TN) /* the last n tile: columns past N never win */
        UNROLL for (int x = 0; x < 2; x++) UNROLL for (int y = 0; y < 4; y++)
            UNROLL for (int q = 0; q < 4; q++) c[x][y][q] =
                col0 + 8 * y + q % 2 < left ? c[x][y][q] : -INFINITY;
    UNROLL for (int x = 0; x < 2; x++) UNROLL for (int h = 0; h < 2; h++)
    {
        float m = c[x][0][2 * h];
        UNROLL for (int q = 1; q < 8; q++) m = fmax_nan(m, c[x][q / 2][2 * h + q % 2]);
        int s = 2 * x + h;
        if (ms_later_wins(m, best[s])) UNROLL for (int q = 0; q < 8; q++)
            {
                float v = c[x][q / 2][2 * h + q % 2];
                if (ms_later_wins(v, best[s])) best[s] = v, bn[s] = n0 + col0 + 8 * (q / 2) + q % 2;
            }
    }
    UNROLL for (int x = 0; x < 2; x++) UNROLL for (int y = 0; y < 4; y++) UNROLL for (int q = 0; q < 4; q++)
        c[x][y][q] = 0.0f;
}

/* One j tile: a[i]'s rows j0 .. j0 + 63 against all of b[m]; each row's (max, argmax) into rowmax and arg.
 * The ring walks (n tile, k stage) pairs as one sequence, stage s in buffer s % 4. */
__device__ static void j_tile(const float *ai, const float *bm, int J, int N, int K, int j0, float *sa,
                              float *ring, float (*mbest)[V4_TJ], int (*marg)[V4_TJ], float *rowmax,
                              int *argrow, int M)
{
    const int lda = (int)ms4_k_padded(K), nk = lda / V4_TK, steps = ((N - 1) / V4_TN + 1) * nk;
    const int w = threadIdx.x / 32, wr = w / 2 * 32, wc = w % 2 * 32;
    __syncthreads(); /* every warp is done with the previous j tile's a rows and ring before they are refilled
                      */
    copy_tile(sa, lda, ai, J, K, j0, 0, lda, V4_TJ);
    cp_async_commit();
    for (int s = 0; s < V4_STAGES - 1; s++) { /* the ring's first three stages */
        if (s < steps)
            copy_tile(ring + s * V4_TN * V4_TK, V4_TK, bm, N, K, s / nk * V4_TN, s % nk * V4_TK, V4_TK,
                      V4_TN);
        cp_async_commit();
    }
    cp_async_wait<V4_STAGES - 1>(); /* this thread's copies of a[i]'s tile have landed */
    round_tile(sa, lda, lda, V4_TJ);
    float c[2][4][4] = {}, best[4];
    int bn[4];
    UNROLL for (int s = 0; s < 4; s++) best[s] = -INFINITY, bn[s] = 0; /* a real column: see ms_better */
    for (int s = 0; s < steps; s++) {
        float *stage = ring + s % V4_STAGES * V4_TN * V4_TK;
        cp_async_wait<V4_STAGES - 2>(); /* this thread's copies of stage s have landed */
        round_tile(stage, V4_TK, V4_TK, V4_TN);
        __syncthreads(); /* stage s (and a's tile) complete and rounded; every warp is done with stage s - 1
                          */
        int t = s + V4_STAGES - 1; /* refill stage s - 1's buffer */
        if (t < steps)
            copy_tile(ring + t % V4_STAGES * V4_TN * V4_TK, V4_TK, bm, N, K, t / nk * V4_TN, t % nk * V4_TK,
                      V4_TK, V4_TN);
        cp_async_commit(); /* an empty group near the end keeps the wait's count */
        int ka = s % nk * V4_TK;
        v4_frags f[2];
        load_frags(f[0], sa, lda, ka, stage, 0, wr, wc);
        UNROLL for (int kk = 0; kk < V4_TK / 8; kk++)
        {
            if (kk + 1 < V4_TK / 8)
                load_frags(f[(kk + 1) % 2], sa, lda, ka + 8 * kk + 8, stage, 8 * kk + 8, wr, wc);
            mma_step(c, f[kk % 2]);
        }
        if (s % nk == nk - 1) fold_tile(c, best, bn, s / nk * V4_TN, wc, N);
    }
    cp_async_wait<0>(); /* only empty groups are left: nothing in flight into the next j tile's buffers */
    /* the quad's 4 lanes hold the same rows: merge by the rule (their columns interleave), then the 2 warp
     * columns through shared memory */
    UNROLL for (int s = 0; s < 4; s++) UNROLL for (int off = 1; off < 4; off *= 2)
    {
        float ov = __shfl_xor_sync(0xffffffffu, best[s], off);
        int on = __shfl_xor_sync(0xffffffffu, bn[s], off);
        if (ms_better_f(ov, on, best[s], bn[s])) best[s] = ov, bn[s] = on;
    }
    int lane = threadIdx.x % 32;
    if (lane % 4 == 0) UNROLL for (int s = 0; s < 4; s++)
        {
            int row = wr + 16 * (s / 2) + 8 * (s % 2) + lane / 4;
            mbest[w % 2][row] = best[s], marg[w % 2][row] = bn[s];
        }
    __syncthreads(); /* both warp columns' maxima are in shared memory */
    if (threadIdx.x < V4_TJ) {
        int row = threadIdx.x;
        float b = mbest[0][row];
        int n = marg[0][row];
        if (ms_better_f(mbest[1][row], marg[1][row], b, n)) b = mbest[1][row], n = marg[1][row];
        rowmax[row] = b;
        if (argrow && j0 + row < J) argrow[(long long)(j0 + row) * M] = n;
    }
    __syncthreads(); /* rowmax holds the merged maxima */
}

__global__ void ms_forward_v4(int I, int J, int M, int N, int K, const float *a, const float *b, float *out,
                              int *arg)
{
    DYNAMIC_SHARED(float, smem);
    __shared__ float mbest[2][V4_TJ], rowmax[V4_TJ];
    __shared__ int marg[2][V4_TJ];
    float *sa = smem, *ring = smem + V4_TJ * ms4_k_padded(K);
    int m = blockIdx.x / I, i = blockIdx.x % I; /* i inner: b[m] stays in L2 */
    const float *ai = a + (long long)i * J * K, *bm = b + (long long)m * N * K; /* a[i] (J, K), b[m] (N, K) */
    int *argrow = arg ? arg + (long long)i * J * M + m : 0; /* arg[i, :, m], stride M */
    float sum = 0.0f;
    for (int j0 = 0; j0 < J; j0 += V4_TJ) {
        j_tile(ai, bm, J, N, K, j0, sa, ring, mbest, marg, rowmax, argrow, M);
        if (threadIdx.x == 0)
            for (int jj = 0; jj < V4_TJ && j0 + jj < J; jj++) sum += rowmax[jj]; /* j ascending, as v3 */
    }
    if (threadIdx.x == 0 && out) out[(long long)i * M + m] = sum;
}

/* NULL when K <= 256 and this GPU fits the launch (kernels/runtime/cuda_fit.h) */
extern "C" const char *ms4_unfit(const ms_dims *d)
{
    if (d->K > V4_KMAX)
        return "K above 256: cuda-v4 keeps a[i]'s 64 rows of K floats in shared memory (cuda-v3 runs any K)";
    const cuda_launch_need need = {(const void *)ms_forward_v4, V4_THREADS,
                                   (size_t)ms4_smem_bytes((long long)d->K), 80, 0};
    return cuda_fit(&need, 1);
}

/* out may be NULL (recompute), arg may be NULL (--recompute forward) */
static void launch_forward(const ms_dims *d, const float *a, const float *b, float *out, int *arg)
{
    int I = (int)d->I, J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K;
    int smem = (int)ms4_smem_bytes(K); /* within the device's opt-in: ms4_unfit */
    CUDA_CHECK(cudaFuncSetAttribute(ms_forward_v4, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    LAUNCH(ms_forward_v4, I * M, V4_THREADS, smem)(I, J, M, N, K, a, b, out, arg);
    CUDA_CHECK_LAST();
}

extern "C" float *ms4_forward(const ms_dims *d, const float *a, const float *b, int recompute,
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
extern "C" void ms4_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s,
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
