/* maxsim_v5.cu - lesson 3, cuda-v5: v4 on 16-bit operands (--precision bf16 or fp16), m16n8k16.
 * Changed from v4: a and b are converted once, before the kernel, to bf16 or fp16 rows padded to a multiple
 * of 8 columns (as ColBERT stores its embeddings), so every copy is a 16-byte cp.async and nothing is rounded
 * inside the kernel; half the bytes per element let a[i]'s resident tile hold 128 rows, 8 warps of 32 x 32,
 * and a stage 64 columns of K; each mma.sync multiplies k = 16. Products are exact and summed in fp32:
 * only the operands' rounding (8 or 11 bits) moves a score, perhaps an argmax. Backward: v1's (ms1_grads). */
#include <mma_ptx.h>

#include "maxsim.h"

#include "runtime/bf16.h"
#include "runtime/cuda_check.h"
#include "runtime/cuda_fit.h"
#include "runtime/cuda_track.h"
#include "runtime/fp16.h"
#include "runtime/hd.h"
#include "runtime/launch.h"

#include <math.h>
#include <stdint.h>

#define V5_TJ 128 /* rows of a[i] resident: a j tile */
#define V5_TN 64 /* rows of b[m] a stage holds: an n tile */
#define V5_TK 64 /* columns of K a stage holds: one 128-byte row segment per row */
#define V5_STAGES 4 /* the ring: three stages in flight while the warps multiply the fourth */
#define V5_THREADS 256 /* 8 warps, 4 x 2, each 32 x 32 scores: 2 m16 tiles x 4 n8 tiles */
#define V5_KMAX 256 /* a[i]'s tile is 128 x K halves: 64 KB at K = 256, beside the ring's 32 KB */

static_assert(V5_TK == 64, "a row segment is 8 chunks of 16 bytes: the swizzle's XOR takes 3 bits");
static_assert(V5_THREADS == 8 * 32 && V5_TJ == 4 * 32 && V5_TN == 2 * 32, "4 x 2 warps of 32 x 32 scores");

/* the converted rows' length: K rounded up to whole 16-byte chunks */
HD long long ms5_k8(long long K) { return (K + 7) / 8 * 8; }
/* K rounded up to whole stages: the columns a[i]'s tile holds (zeros past K) */
HD long long ms5_k_padded(long long K) { return (K + V5_TK - 1) / V5_TK * V5_TK; }
/* dynamic shared memory: a[i]'s tile, then the ring */
HD long long ms5_smem_bytes(long long K) { return 2 * (V5_TJ * ms5_k_padded(K) + V5_STAGES * V5_TN * V5_TK); }

/* Offset in halves of (row, k) in a tile whose rows are ld halves (ld % 64 == 0): chunk k / 8 of each
 * 128-byte segment moves to chunk (k / 8) ^ (row % 8), so the 8 rows one ldmatrix matrix reads hold the same
 * chunk in 8 different bank groups (v4's swizzle, in 16-bit units). */
__device__ static int swz(int row, int k, int ld)
{
    return row * ld + (((k >> 3) ^ (row & 7)) << 3) + (k & 7);
}

/* y[r, k] = x[r, k] rounded to bf16 or fp16 for k < K, 0 for K <= k < K8: x (rows, K) floats, y (rows,
 * K8). */
__global__ void ms_to_16bit(const float *x, long long rows, int K, int K8, int fp16, uint16_t *y)
{
    long long n = rows * K8;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n;
         e += (long long)gridDim.x * blockDim.x) {
        long long r = e / K8;
        int k = (int)(e % K8);
        float v = k < K ? x[r * K + k] : 0.0f;
        y[e] = fp16 ? f16_from_f32(v) : bf16_from_f32(v);
    }
}

/* Rows [r0, r0 + tile_rows) x columns [k0, k0 + width) of x (rows, K8 halves) into tile s (ld halves a row),
 * each thread a strided share of the 16-byte chunks: cp.async, or zeros past the rows and past K8. */
__device__ static void copy_tile(uint16_t *s, int ld, const uint16_t *x, int rows, int K8, int r0, int k0,
                                 int width, int tile_rows)
{
    int chunks = width / 8;
    for (int e = threadIdx.x; e < tile_rows * chunks; e += V5_THREADS) {
        int rr = e / chunks, kk = e % chunks * 8, k = k0 + kk;
        long long r = (long long)r0 + rr;
        uint16_t *dst = s + swz(rr, kk, ld);
        if (r < rows && k < K8) {
            cp_async_16(dst, x + r * K8 + k);
        } else {
            uint4 z = {0u, 0u, 0u, 0u};
            *(uint4 *)dst = z;
        }
    }
}

/* One k step's fragments of this warp: a's 2 m16 tiles (rows wr ..) at column ka of a[i]'s tile, b's 4 n8
 * tiles (rows wc .. of the stage) at column kb: ldmatrix of 8 x 8 matrices of halves, as mma_ptx.h lays the
 * m16n8k16 fragments out (a: rows 0-7 | 8-15, then k 0-7 | 8-15; b stored n-major: k 0-7 | 8-15). */
struct v5_frags {
    uint32_t a[2][4], b[4][2];
};
__device__ static void load_frags(v5_frags &f, const uint16_t *sa, int lda, int ka, const uint16_t *sb,
                                  int kb, int wr, int wc)
{
    int lane = threadIdx.x % 32, r8 = lane % 8, hi = lane / 8 % 2, up = lane / 16;
    UNROLL for (int x = 0; x < 2; x++) ldmatrix_x4(f.a[x][0], f.a[x][1], f.a[x][2], f.a[x][3],
                                                   sa + swz(wr + 16 * x + r8 + 8 * hi, ka + 8 * up, lda));
    UNROLL for (int y = 0; y < 4; y += 2) ldmatrix_x4(f.b[y][0], f.b[y][1], f.b[y + 1][0], f.b[y + 1][1],
                                                      sb + swz(wc + 8 * y + r8 + 8 * up, kb + 8 * hi, V5_TK));
}

template <int F16> __device__ static void mma_step(float (&c)[2][4][4], const v5_frags &f)
{
    UNROLL for (int x = 0; x < 2; x++) UNROLL for (int y = 0; y < 4; y++)
    {
        if (F16)
            mma_f16_m16n8k16(c[x][y], f.a[x], f.b[y], c[x][y]);
        else
            mma_bf16_m16n8k16(c[x][y], f.a[x], f.b[y], c[x][y]);
    }
}

/* v4's fold: this lane's 4 rows of the finished n tile n0 into their running (best, bn), then zeroes the
 * accumulators; one NaN-propagating max per score, the rescan only in a tile that beats the running best. */
__device__ static void fold_tile(float (&c)[2][4][4], float (&best)[4], int (&bn)[4], int n0, int wc, int N)
{
    int col0 = wc + 2 * (threadIdx.x % 4), left = N - n0; /* columns relative to n0: no int overflow */
    if (left < V5_TN) /* the last n tile: columns past N never win */
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

/* One j tile: a[i]'s rows j0 .. j0 + 127 against all of b[m]; each row's (max, argmax) into rowmax and arg.
 * The ring walks (n tile, k stage) pairs as one sequence, stage s in buffer s % 4. */
template <int F16>
__device__ static void j_tile(const uint16_t *ai, const uint16_t *bm, int J, int N, int K, int j0,
                              uint16_t *sa, uint16_t *ring, float (*mbest)[V5_TJ], int (*marg)[V5_TJ],
                              float *rowmax, int *argrow, int M)
{
    const int K8 = (int)ms5_k8(K), lda = (int)ms5_k_padded(K), nk = lda / V5_TK,
              steps = ((N - 1) / V5_TN + 1) * nk;
    const int w = threadIdx.x / 32, wr = w / 2 * 32, wc = w % 2 * 32;
    __syncthreads(); /* every warp is done with the previous j tile's a rows and ring before they are refilled
                      */
    copy_tile(sa, lda, ai, J, K8, j0, 0, lda, V5_TJ);
    for (int s = 0; s < V5_STAGES - 1;
         s++) { /* the ring's first three stages; a's tile joins the first group */
        if (s < steps)
            copy_tile(ring + s * V5_TN * V5_TK, V5_TK, bm, N, K8, s / nk * V5_TN, s % nk * V5_TK, V5_TK,
                      V5_TN);
        cp_async_commit();
    }
    float c[2][4][4] = {}, best[4];
    int bn[4];
    UNROLL for (int s = 0; s < 4; s++) best[s] = -INFINITY, bn[s] = 0; /* a real column: see ms_better */
    for (int s = 0; s < steps; s++) {
        uint16_t *stage = ring + s % V5_STAGES * V5_TN * V5_TK;
        cp_async_wait<V5_STAGES - 2>(); /* this thread's copies of stage s (and of a's tile) have landed */
        __syncthreads(); /* stage s (and a's tile) complete; every warp is done with stage s - 1 */
        int t = s + V5_STAGES - 1; /* refill stage s - 1's buffer */
        if (t < steps)
            copy_tile(ring + t % V5_STAGES * V5_TN * V5_TK, V5_TK, bm, N, K8, t / nk * V5_TN, t % nk * V5_TK,
                      V5_TK, V5_TN);
        cp_async_commit(); /* an empty group near the end keeps the wait's count */
        int ka = s % nk * V5_TK;
        v5_frags f[2];
        load_frags(f[0], sa, lda, ka, stage, 0, wr, wc);
        UNROLL for (int kk = 0; kk < V5_TK / 16; kk++)
        {
            if (kk + 1 < V5_TK / 16)
                load_frags(f[(kk + 1) % 2], sa, lda, ka + 16 * kk + 16, stage, 16 * kk + 16, wr, wc);
            mma_step<F16>(c, f[kk % 2]);
        }
        if (s % nk == nk - 1) fold_tile(c, best, bn, s / nk * V5_TN, wc, N);
    }
    cp_async_wait<0>(); /* only empty groups are left: nothing in flight into the next j tile's buffers */
    /* v4's merge: the quad's 4 lanes by shuffles, then the 2 warp columns through shared memory */
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
    if (threadIdx.x < V5_TJ) {
        int row = threadIdx.x;
        float b = mbest[0][row];
        int n = marg[0][row];
        if (ms_better_f(mbest[1][row], marg[1][row], b, n)) b = mbest[1][row], n = marg[1][row];
        rowmax[row] = b;
        if (argrow && j0 + row < J) argrow[(long long)(j0 + row) * M] = n;
    }
    __syncthreads(); /* rowmax holds the merged maxima */
}

__global__ void ms_forward_v5(int I, int J, int M, int N, int K, int fp16, const uint16_t *a,
                              const uint16_t *b, float *out, int *arg)
{
    DYNAMIC_SHARED(uint16_t, smem);
    __shared__ float mbest[2][V5_TJ], rowmax[V5_TJ];
    __shared__ int marg[2][V5_TJ];
    long long K8 = ms5_k8(K);
    uint16_t *sa = smem, *ring = smem + V5_TJ * ms5_k_padded(K);
    int m = blockIdx.x / I, i = blockIdx.x % I; /* i inner: b[m] stays in L2 */
    const uint16_t *ai = a + (long long)i * J * K8, *bm = b + (long long)m * N * K8; /* (J, K8), (N, K8) */
    int *argrow = arg ? arg + (long long)i * J * M + m : 0; /* arg[i, :, m], stride M */
    float sum = 0.0f;
    for (int j0 = 0; j0 < J; j0 += V5_TJ) {
        if (fp16)
            j_tile<1>(ai, bm, J, N, K, j0, sa, ring, mbest, marg, rowmax, argrow, M);
        else
            j_tile<0>(ai, bm, J, N, K, j0, sa, ring, mbest, marg, rowmax, argrow, M);
        if (threadIdx.x == 0)
            for (int jj = 0; jj < V5_TJ && j0 + jj < J; jj++) sum += rowmax[jj]; /* j ascending, as v3 */
    }
    if (threadIdx.x == 0 && out) out[(long long)i * M + m] = sum;
}

/* NULL when K <= 256 and this GPU fits the launch (kernels/runtime/cuda_fit.h) */
extern "C" const char *ms5_unfit(const ms_dims *d)
{
    if (d->K > V5_KMAX)
        return "K above 256: cuda-v5 keeps a[i]'s 128 rows of K halves in shared memory (cuda-v3 runs any K)";
    const cuda_launch_need need[] = {
        {(const void *)ms_forward_v5, V5_THREADS, (size_t)ms5_smem_bytes((long long)d->K), 80, 0},
        {(const void *)ms_to_16bit, 256, 0, 80, 0}};
    return cuda_fit(need, 2);
}

/* x (rows, K) floats -> a tracked (rows, K8) 16-bit copy */
static uint16_t *to_16bit(const float *x, long long rows, int K, int fp16, const char *label)
{
    int K8 = (int)ms5_k8(K);
    uint16_t *y = (uint16_t *)dev_alloc_array(size_mul((size_t)rows, (size_t)K8), DT_BF16, label);
    long long n = rows * K8, blocks = (n + 255) / 256;
    LAUNCH(ms_to_16bit, (int)blocks, 256, 0)(x, rows, K, K8, fp16, y); /* rows * K8 / 256 < 2^31: unfit */
    CUDA_CHECK_LAST();
    return y;
}

/* out may be NULL (recompute), arg may be NULL (--recompute forward) */
static void launch_forward(const ms_dims *d, const float *a, const float *b, int fp16, float *out, int *arg)
{
    int I = (int)d->I, J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K;
    uint16_t *a16 = to_16bit(a, (long long)d->I * J, K, fp16, "a16 [I,J,K8] 16-bit copy (cuda-v5 forward)");
    uint16_t *b16 = to_16bit(b, (long long)d->M * N, K, fp16, "b16 [M,N,K8] 16-bit copy (cuda-v5 forward)");
    int smem = (int)ms5_smem_bytes(K); /* within the device's opt-in: ms5_unfit */
    CUDA_CHECK(cudaFuncSetAttribute(ms_forward_v5, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    LAUNCH(ms_forward_v5, I * M, V5_THREADS, smem)(I, J, M, N, K, fp16, a16, b16, out, arg);
    CUDA_CHECK_LAST();
    dev_free(b16);
    dev_free(a16);
}

extern "C" float *ms5_forward(const ms_dims *d, const float *a, const float *b, int recompute,
                              int deterministic, int fp16, cuda_ms_saved *s)
{
    float *out = (float *)dev_alloc_array(ms_out_count(d), DT_F32, "out [I,M] f32"); /* [I, M] */
    int *arg =
        recompute ? NULL
                  : (int *)dev_alloc_array(ms_arg_count(d), DT_I32, "arg [I,J,M] int32 (saved for backward)");
    launch_forward(d, a, b, fp16, out, arg);
    s->arg = (int32_t *)arg, s->recompute = recompute, s->deterministic = deterministic, s->f16 = fp16;
    return out;
}

/* with --recompute this version's forward runs again into a transient argmax; then v1's gradients */
extern "C" void ms5_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s,
                             const float *dout, float **da, float **db)
{
    int *arg = (int *)s->arg; /* [I, J, M] */
    if (!arg) {
        arg = (int *)dev_alloc_array(ms_arg_count(d), DT_I32, "arg [I,J,M] int32 (recomputed in backward)");
        launch_forward(d, a, b, s->f16, NULL, arg);
    }
    s->arg = NULL;
    ms1_grads(d, a, b, s->deterministic, arg, dout, da, db);
}
