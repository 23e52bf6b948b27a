/* maxsim_v6.cu - lesson 3, cuda-v6: v5 on Hopper's wgmma, fed by the TMA through mbarriers (sm_90a only).
 * Read v5 first: its 16-bit copies of a and b, the max folded on the accumulators, the sum over j are kept.
 * Changed from v5: one thread has the TMA copy boxes (swizzled by the copy) into a[i]'s tile and a 4-stage
 * ring of b with full/empty mbarriers, no cp.async; two warpgroups each multiply 128 of a[i]'s 256 resident
 * rows by 128-row b tiles, wgmma m64n128k16 from shared memory, no ldmatrix. Compute capability 9.0 only
 * (the wrappers trap elsewhere). Backward: v1's (ms1_grads). */
#include <hopper_ptx.h>
#include <mma_ptx.h>

#include "maxsim.h"

#include "runtime/bf16.h"
#include "runtime/cuda_check.h"
#include "runtime/cuda_fit.h"
#include "runtime/cuda_track.h"
#include "runtime/fp16.h"
#include "runtime/hd.h"
#include "runtime/launch.h"
#include "runtime/tma_map.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#define V6_TJ 256 /* rows of a[i] resident: a j tile, 128 per consumer warpgroup */
#define V6_TN 128 /* rows of b[m] a stage holds: an n tile, one wgmma's N */
#define V6_TK 64 /* columns of K a stage holds: one 128-byte swizzled row of halves */
#define V6_STAGES 4 /* the ring: the TMA fills three stages while the warpgroups multiply the fourth */
#define V6_CONSUMERS 256 /* two warpgroups, threads 0 .. 255 */
#define V6_THREADS (V6_CONSUMERS + 32) /* and the producer's warp: thread 256 copies, thread 287 sums */
#define V6_KMAX 256 /* a[i]'s tile is 256 x K halves: 128 KB at K = 256, beside the ring's 64 KB */
#define V6_ROW 128 /* bytes of a tile row: V6_TK halves */
#define V6_ATOM 1024 /* the 128-byte swizzle's atom, 8 rows: every tile starts on one */

static_assert(V6_TK * 2 == V6_ROW && V6_ROW == 128, "a stage's row is the 128-byte swizzle's span");
static_assert(V6_TJ == 2 * 128 && V6_CONSUMERS == 2 * 128, "each consumer warpgroup owns two m64 halves");

/* the converted rows' length: K rounded up to whole 16-byte chunks (the TMA's row stride is a multiple of
 * 16) */
HD long long ms6_k8(long long K) { return (K + 7) / 8 * 8; }
/* stages of K: a[i]'s tile holds this many 256 x 64 boxes, zeros past K8 (the TMA's fill outside the
 * tensor) */
HD int ms6_k_stages(long long K) { return (int)((K + V6_TK - 1) / V6_TK); }
/* dynamic shared memory: the slack to align the first tile to 1024 bytes, a[i]'s tile, then the ring */
HD long long ms6_smem_bytes(long long K)
{
    return V6_ATOM + (long long)V6_ROW * (V6_TJ * ms6_k_stages(K) + V6_STAGES * V6_TN);
}

/* v5's conversion: y[r, k] = x[r, k] rounded to bf16 or fp16 for k < K, 0 for K <= k < K8 */
__global__ void ms6_to_16bit(const float *x, long long rows, int K, int K8, int fp16, uint16_t *y)
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

/* The block's barriers, in static shared memory (8-byte aligned): a_full completes when the TMA has landed
 * a's boxes of the j tile, full[s] when stage s's b box has, empty[s] when both warpgroups are done with
 * it. */
struct v6_bars {
    uint64_t a_full, full[V6_STAGES], empty[V6_STAGES];
};

/* The producer (thread 256), one j tile: a's rows a_row .., one 256 x 64 box per stage of K, on one barrier;
 * then b[m]'s stages, (n tile, k stage) = (step / nk, step % nk). use counts the stages this thread has
 * issued (the consumers count the same ones): buffer use % 4, for the (use / 4)-th time. Counting what ran,
 * not computing it from the tile, keeps both sides agreed when the emulator's dry run skips iterations. */
__device__ static void produce(const CUtensorMap *ma, const CUtensorMap *mb, int a_row, int b_row, int steps,
                               int nk, char *sa, char *ring, v6_bars &bar, long long &use)
{
    mbarrier_arrive_expect_tx(&bar.a_full, nk * V6_TJ * V6_ROW); /* whole boxes count, zeros included */
    for (int kk = 0; kk < V6_KMAX / V6_TK; kk++)
        if (kk < nk) tma_load_2d(sa + kk * V6_TJ * V6_ROW, ma, kk * V6_TK, a_row, &bar.a_full);
    for (int step = 0; step < steps; step++) {
        int s = (int)(use % V6_STAGES), parity = (int)(use / V6_STAGES & 1);
        use++;
        mbarrier_wait_parity(&bar.empty[s], parity ^ 1); /* a fresh barrier's last phase passes */
        mbarrier_arrive_expect_tx(&bar.full[s], V6_TN * V6_ROW);
        tma_load_2d(ring + s * V6_TN * V6_ROW, mb, step % nk * V6_TK, b_row + step / nk * V6_TN,
                    &bar.full[s]);
    }
}

/* One stage: this warpgroup's two 64-row halves of a (box a_box) times the stage's 128 rows of b, k = 16 at a
 * time: the k-th slice of a 128-byte-swizzled K-major tile is its descriptor with 32 k bytes added
 * (hopper_ptx.h). scale_d = 0 on an n tile's first stage starts the accumulators from zero. */
template <int F16> __device__ static void mma_stage(float (&d)[2][64], const char *a_box, const char *stage,
                                                    int first)
{
    wgmma_fence(); /* the fold has written the accumulators since the last wgmma */
    UNROLL for (int k = 0; k < V6_TK / 16; k++)
    {
        uint64_t db = wgmma_desc(stage + 32 * k, 16, V6_ATOM, WGMMA_SWIZZLE_128B);
        UNROLL for (int h = 0; h < 2; h++)
        {
            uint64_t da = wgmma_desc(a_box + h * 64 * V6_ROW + 32 * k, 16, V6_ATOM, WGMMA_SWIZZLE_128B);
            if (F16)
                wgmma_f16_m64n128k16(d[h], da, db, !first || k > 0);
            else
                wgmma_bf16_m64n128k16(d[h], da, db, !first || k > 0);
        }
    }
    wgmma_commit();
    wgmma_wait<0>(); /* the accumulators are final and the stage is no longer read */
}

/* v5's fold on wgmma's fragment (hopper_ptx.h): register 4 c + 2 r + q of half h is row 64 h + 16 w + g + 8
 * r, column 8 c + 2 t + q (lane = 4 g + t), so this lane's slot 2 h + r sees its 32 columns in increasing
 * order and ms_later_wins decides by value; columns past N (the next document's rows, or zeros) never win. */
__device__ static void fold_tile(float (&d)[2][64], float (&best)[4], int (&bn)[4], int n0, int N)
{
    int col0 = 2 * (threadIdx.x % 4), left = N - n0; /* columns relative to n0: no int overflow */
    if (left < V6_TN)
        UNROLL for (int h = 0; h < 2; h++) UNROLL for (int e = 0; e < 64; e++)
            d[h][e] = 8 * (e / 4) + col0 + e % 2 < left ? d[h][e] : -INFINITY;
    UNROLL for (int h = 0; h < 2; h++) UNROLL for (int r = 0; r < 2; r++)
    {
        int s = 2 * h + r;
        float m = d[h][2 * r];
        UNROLL for (int c = 0; c < 16; c++) m =
            fmax_nan(m, fmax_nan(d[h][4 * c + 2 * r], d[h][4 * c + 2 * r + 1]));
        if (ms_later_wins(m, best[s])) UNROLL for (int c = 0; c < 16; c++) UNROLL for (int q = 0; q < 2; q++)
            {
                float v = d[h][4 * c + 2 * r + q];
                if (ms_later_wins(v, best[s])) best[s] = v, bn[s] = n0 + 8 * c + col0 + q;
            }
    }
}

/* A consumer thread, one j tile (rows j0 ..; c: the tiles this thread has run before, a's barrier's phase):
 * its warpgroup's 128 rows against all of b[m], stage by stage as the TMA lands them; each row's (max,
 * argmax) merged over the quad into rowmax and arg. */
template <int F16> __device__ static void consume(int j0, int steps, int nk, int N, int J, int M,
                                                  const char *sa, const char *ring, v6_bars &bar, long long c,
                                                  long long &use, float *rowmax, int *argrow)
{
    const int wg = threadIdx.x / 128, w = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;
    const char *a_rows = sa + wg * 128 * V6_ROW;
    float d[2][64] = {}, best[4];
    int bn[4];
    UNROLL for (int s = 0; s < 4; s++) best[s] = -INFINITY, bn[s] = 0; /* a real column: see ms_better */
    mbarrier_wait_parity(&bar.a_full, c & 1); /* a's rows of this j tile */
    for (int step = 0; step < steps; step++) {
        int s = (int)(use % V6_STAGES), parity = (int)(use / V6_STAGES & 1), kk = step % nk;
        use++;
        mbarrier_wait_parity(&bar.full[s], parity);
        mma_stage<F16>(d, a_rows + kk * V6_TJ * V6_ROW, ring + s * V6_TN * V6_ROW, kk == 0);
        if (threadIdx.x % 128 == 0) mbarrier_arrive(&bar.empty[s]); /* after this warpgroup's wait */
        if (kk == nk - 1) fold_tile(d, best, bn, step / nk * V6_TN, N);
    }
    UNROLL for (int s = 0; s < 4; s++) UNROLL for (int off = 1; off < 4; off *= 2)
    {
        float ov = __shfl_xor_sync(0xffffffffu, best[s], off);
        int on = __shfl_xor_sync(0xffffffffu, bn[s], off);
        if (ms_better_f(ov, on, best[s], bn[s])) best[s] = ov, bn[s] = on;
    }
    if (lane % 4 == 0) UNROLL for (int s = 0; s < 4; s++)
        {
            int row = wg * 128 + 64 * (s / 2) + 16 * w + lane / 4 + 8 * (s % 2);
            rowmax[row] = best[s];
            if (argrow && j0 + row < J) argrow[(long long)(j0 + row) * M] = bn[s];
        }
}

/* j ascending, as v3 and v5: the rows of a j tile that lie in a[i] */
__device__ static void add_rows(const float *rowmax, int rows, float &sum)
{
    for (int r = 0; r < V6_TJ && r < rows; r++) sum += rowmax[r];
}

/* One block per (i, m), i inner (b[m] stays in L2), walking a[i]'s j tiles. One __syncthreads per j tile:
 * every wgmma of the previous tile has retired, so a's tile may be refilled, and its rowmax is complete;
 * thread 287 adds it to the sum while the next tile runs (rowmax is double-buffered). */
#define V6_BOUNDS __launch_bounds__(V6_THREADS, 1) /* 288 threads: up to 224 registers each */
__global__ void V6_BOUNDS ms_forward_v6(const __grid_constant__ CUtensorMap map_a,
                                        const __grid_constant__ CUtensorMap map_b, int I, int J, int M, int N,
                                        int K, int fp16, float *out, int *arg)
{
    DYNAMIC_SHARED(char, raw);
    __shared__ v6_bars bar;
    __shared__ float rowmax[2][V6_TJ];
    const int nk = ms6_k_stages(K), steps = (N + V6_TN - 1) / V6_TN * nk;
    char *sa = (char *)(((uintptr_t)raw + V6_ATOM - 1) & ~(uintptr_t)(V6_ATOM - 1));
    char *ring = sa + nk * V6_TJ * V6_ROW;
    int m = blockIdx.x / I, i = blockIdx.x % I, last = 0; /* last: the rows of the tile the sum has not had */
    int *argrow = arg ? arg + (long long)i * J * M + m : 0; /* arg[i, :, m], stride M */
    long long c = 0, use = 0; /* the j tiles and the ring's stages this thread has run */
    float sum = 0.0f;
    if (threadIdx.x == 0) {
        mbarrier_init(&bar.a_full, 1);
        for (int s = 0; s < V6_STAGES; s++) mbarrier_init(&bar.full[s], 1), mbarrier_init(&bar.empty[s], 2);
        fence_proxy_async(); /* the inits visible to the TMA's complete_tx (the async proxy) */
    }
    for (int j0 = 0; j0 < J; j0 += V6_TJ) {
        /* the barriers initialised (first tile); the last tile done: its wgmmas retired, its rowmax
         * written */
        __syncthreads();
        if (threadIdx.x == V6_CONSUMERS)
            produce(&map_a, &map_b, i * J + j0, m * N, steps, nk, sa, ring, bar, use);
        else if (threadIdx.x < V6_CONSUMERS && fp16)
            consume<1>(j0, steps, nk, N, J, M, sa, ring, bar, c, use, rowmax[c % 2], argrow);
        else if (threadIdx.x < V6_CONSUMERS)
            consume<0>(j0, steps, nk, N, J, M, sa, ring, bar, c, use, rowmax[c % 2], argrow);
        else if (threadIdx.x == V6_THREADS - 1 && c > 0)
            add_rows(rowmax[(c - 1) % 2], last, sum);
        last = J - j0, c++;
    }
    __syncthreads(); /* the last tile's rowmax */
    if (threadIdx.x == V6_THREADS - 1) {
        add_rows(rowmax[(c - 1) % 2], last, sum);
        if (out) out[(long long)i * M + m] = sum;
    }
}

/* NULL on compute capability 9.0 (sm_90a: its wgmma and TMA) when K <= 256 and this GPU fits the launch */
extern "C" const char *ms6_unfit(const ms_dims *d)
{
    static char why[160];
    const cuda_device_info *dev = cuda_device_info_get();
    if (dev && dev->cc != 90) {
        snprintf(why, sizeof why, "needs compute capability 9.0 (sm_90a's wgmma and TMA), this GPU has %d.%d",
                 dev->cc / 10, dev->cc % 10);
        return why;
    }
    if (d->K > V6_KMAX)
        return "K above 256: cuda-v6 keeps a[i]'s 256 rows of K halves in shared memory (cuda-v3 runs any K)";
    const cuda_launch_need need[] = {
        {(const void *)ms_forward_v6, V6_THREADS, (size_t)ms6_smem_bytes((long long)d->K), 90, 0},
        {(const void *)ms6_to_16bit, 256, 0, 90, 0}};
    return cuda_fit(need, 2);
}

/* x (rows, K) floats -> a tracked (rows, K8) 16-bit copy */
static uint16_t *to_16bit(const float *x, long long rows, int K, int fp16, const char *label)
{
    int K8 = (int)ms6_k8(K);
    uint16_t *y = (uint16_t *)dev_alloc_array(size_mul((size_t)rows, (size_t)K8), DT_BF16, label);
    long long n = rows * K8, blocks = (n + 255) / 256;
    LAUNCH(ms6_to_16bit, (int)blocks, 256, 0)(x, rows, K, K8, fp16, y); /* rows * K8 / 256 < 2^31: unfit */
    CUDA_CHECK_LAST();
    return y;
}

/* out may be NULL (recompute), arg may be NULL (--recompute forward). The maps: a as (I*J, K8), b as (M*N,
 * K8), boxes of 256 and 128 rows of 64 halves, swizzled by 128 bytes; rows and columns outside them read as
 * zeros. */
static void launch_forward(const ms_dims *d, const float *a, const float *b, int fp16, float *out, int *arg)
{
    int I = (int)d->I, J = (int)d->J, M = (int)d->M, N = (int)d->N, K = (int)d->K, K8 = (int)ms6_k8(K);
    uint16_t *a16 = to_16bit(a, (long long)d->I * J, K, fp16, "a16 [I,J,K8] 16-bit copy (cuda-v6 forward)");
    uint16_t *b16 = to_16bit(b, (long long)d->M * N, K, fp16, "b16 [M,N,K8] 16-bit copy (cuda-v6 forward)");
    CUtensorMapDataType type = fp16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    CUtensorMap ma =
        tma_map_2d(a16, type, 2, (uint64_t)I * J, K8, K8, V6_TJ, V6_TK, CU_TENSOR_MAP_SWIZZLE_128B);
    CUtensorMap mb =
        tma_map_2d(b16, type, 2, (uint64_t)M * N, K8, K8, V6_TN, V6_TK, CU_TENSOR_MAP_SWIZZLE_128B);
    int smem = (int)ms6_smem_bytes(K); /* within the device's opt-in: ms6_unfit */
    CUDA_CHECK(cudaFuncSetAttribute(ms_forward_v6, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    LAUNCH(ms_forward_v6, I * M, V6_THREADS, smem)(ma, mb, I, J, M, N, K, fp16, out, arg);
    CUDA_CHECK_LAST();
    dev_free(b16);
    dev_free(a16);
}

extern "C" float *ms6_forward(const ms_dims *d, const float *a, const float *b, int recompute,
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
extern "C" void ms6_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s,
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
