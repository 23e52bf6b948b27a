/* linear_ce_v5.cu - lesson 5, cuda-v5: v4 on Hopper's wgmma, fed by the TMA through mbarriers (sm_90a only).
 * Read v4 first: its tiles, block order, partials, G chunk, filter flags, kept-tile lists and workspace are
 * kept (lce4_memory), its merge and list kernels called as they are. Changed from v4: one producer thread has
 * the TMA copy each stage's boxes into a 4-stage full/empty mbarrier ring; two consumer warpgroups run wgmma
 * m64n256k16 on 64 rows each; dx = G W and dW = G^T x read W, x and G^T through MN-major descriptors (no
 * transposed copy). Compute capability 9.0 only, 197,632 bytes of shared memory a block, H % 8 == 0. */
#include <hopper_ptx.h>

#include "linear_ce.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_fit.h"
#include "runtime/cuda_track.h"
#include "runtime/launch.h"
#include "runtime/tma_map.h"

#include <stdio.h>

/* No cp.async and no ldmatrix: the TMA swizzles each box by 128 bytes as it copies, and wgmma reads the
 * stages from shared memory by descriptor. A 99 KB GPU is refused with the reason (the ring needs the 227 KB
 * a 9.0 block may opt in to); H must be a multiple of 8 because the TMA's row stride is a multiple of 16
 * bytes (v4 runs any H). */

#define BM LCE4_TILE_M /* output rows of a block: 64 per consumer warpgroup */
#define BN LCE4_TILE_N /* output columns of a block: one wgmma's N */
#define BK 64          /* K per stage: a 128-byte swizzled row of bf16 */
#define STAGES 4       /* the TMA fills three stages while the warpgroups multiply the fourth */
#define CONSUMERS 256  /* two warpgroups, threads 0 .. 255 */
#define THREADS (CONSUMERS + 32) /* and the producer's warp: thread 256 issues the copies */
#define FLAG LCE4_TILE_M         /* the filter's tile along K: two stages */
#define ROW 128                  /* bytes of a box row: BK bf16 */
#define ATOM 1024                /* the 128-byte swizzle's atom, 8 rows: every box starts on one */
#define SLAB (64 * ROW)          /* an MN-major box: 64 k rows of 64 elements, 8,192 bytes */
#define A_BYTES (BM * ROW)       /* A's stage: [128 rows][64 k], or two MN-major slabs of 64 m */
#define B_BYTES (BN * ROW)       /* B's stage: [256 rows][64 k], or four MN-major slabs of 64 n */
#define STAGE_BYTES (A_BYTES + B_BYTES)
#define SMEM_BYTES (ATOM + STAGES * STAGE_BYTES) /* 197,632: the slack to align the ring to 1024 bytes */
#define ACC (BN / 2) /* a thread's accumulators: 64 x 256 fp32 over 128 threads */

static_assert(BK * 2 == ROW && A_BYTES == 2 * SLAB && B_BYTES == 4 * SLAB, "boxes of 128-byte rows");
static_assert(BM == 2 * 64 && FLAG % BK == 0 && BN == 2 * FLAG, "two m64 warpgroups; whole stages a flag");
static_assert(SMEM_BYTES <= 227 * 1024, "fits the 227 KB a block may opt in to on compute capability 9.0");

/* The stages a GEMM takes, as v4's lce4_ksteps: with tiles, stage s is BK columns (s % 2) of K tile
 * tiles[s / 2] (the filter's kept tiles), else K [BK s, BK s + BK). */
struct lce5_ksteps {
    const int *tiles;
    int steps;
};

static __device__ int lce5_k0(lce5_ksteps s, int step)
{
    const int per = FLAG / BK;
    return s.tiles ? s.tiles[step / per] * FLAG + step % per * BK : step * BK;
}

/* full[s] completes when stage s's boxes have landed, empty[s] when both warpgroups are done with it */
struct lce5_bars {
    uint64_t full[STAGES], empty[STAGES];
};

/* The producer, thread 256: stage `step` of A at rows (or, AT, columns) m0 and of B at rows (BT: columns) n0,
 * B's K offset by kb (dx: W's rows of the chunk start at c0).
 * A K-major operand is one box of 64 k by its rows; one whose K runs down its rows (AT: G^T given as G; BT: W
 * or x given as they lie) is slabs of 64 elements by 64 k rows, side by side along M or N. use counts the
 * stages issued (the consumers count the same): slot use % 4, for the (use / 4)-th time. */
template <bool AT, bool BT>
static __device__ void lce5_produce(const CUtensorMap *ma, const CUtensorMap *mb, int m0, int n0,
                                    int kb, lce5_ksteps ks, char *ring, lce5_bars &bar)
{
    long long use = 0;
    for (int step = 0; step < ks.steps; step++) {
        int s = (int)(use % STAGES), parity = (int)(use / STAGES & 1), k0 = lce5_k0(ks, step);
        use++;
        mbarrier_wait_parity(&bar.empty[s], parity ^ 1); /* a fresh barrier's last phase passes */
        mbarrier_arrive_expect_tx(&bar.full[s], STAGE_BYTES); /* whole boxes count, zeros included */
        char *a = ring + s * STAGE_BYTES, *b = a + A_BYTES;
        if (AT)
            for (int h = 0; h < BM / 64; h++) tma_load_2d(a + h * SLAB, ma, m0 + 64 * h, k0, &bar.full[s]);
        else
            tma_load_2d(a, ma, k0, m0, &bar.full[s]);
        if (BT)
            for (int c = 0; c < BN / 64; c++)
                tma_load_2d(b + c * SLAB, mb, n0 + 64 * c, kb + k0, &bar.full[s]);
        else
            tma_load_2d(b, mb, kb + k0, n0, &bar.full[s]);
    }
}

/* A consumer thread: its warpgroup's 64 rows by the 256 columns, stage by stage as the TMA lands them, 16 k
 * at a time. K-major: the k-th slice of a swizzled tile is its descriptor with 32 k bytes added, SBO 1024
 * (8 rows); MN-major: the address plus 2048 k (16 k rows), SBO 1024 (8 k rows), LBO 8192 (the next slab of
 * 64 along M or N) (hopper_ptx.h). The stage is released after the wait: wgmma reads it until then. */
template <bool AT, bool BT>
static __device__ void lce5_consume(lce5_ksteps ks, const char *ring, lce5_bars &bar, float (&acc)[ACC])
{
    const int wg = threadIdx.x / 128;
    long long use = 0;
    for (int step = 0; step < ks.steps; step++) {
        int s = (int)(use % STAGES), parity = (int)(use / STAGES & 1);
        use++;
        mbarrier_wait_parity(&bar.full[s], parity);
        /* this warpgroup's A: 64 K-major rows, or one MN-major slab of 64 m, 8,192 bytes either way */
        const char *a = ring + s * STAGE_BYTES + wg * SLAB, *b = ring + s * STAGE_BYTES + A_BYTES;
        wgmma_fence(); /* the accumulators were written (zeroed) before the first mma_async */
        UNROLL
        for (int k = 0; k < BK / 16; k++) {
            uint64_t da = wgmma_desc(a + (AT ? 2048 : 32) * k, SLAB, ATOM, WGMMA_SWIZZLE_128B);
            uint64_t db = wgmma_desc(b + (BT ? 2048 : 32) * k, SLAB, ATOM, WGMMA_SWIZZLE_128B);
            wgmma_bf16_m64n256k16_t<AT ? 1 : 0, BT ? 1 : 0>(acc, da, db, 1);
        }
        wgmma_commit();
        wgmma_wait<0>(); /* the accumulators are final and the stage is no longer read */
        if (threadIdx.x % 128 == 0) mbarrier_arrive(&bar.empty[s]);
    }
}

/* acc = A[m0 .., K] . B[kb + K, .. n0] over the stages ks takes; every thread of the block calls it (the
 * barriers' init needs them all), the producer's warp returns with acc untouched. Accumulator acc[4 i + 2 r +
 * e] of thread 128 wg + 32 w + 4 g + t is output (row 64 wg + 16 w + g + 8 r, column 8 i + 2 t + e) of the
 * block's [128, 256] (wgmma's fragment, hopper_ptx.h). */
template <bool AT, bool BT>
static __device__ void lce5_gemm(const CUtensorMap *ma, const CUtensorMap *mb, int m0, int n0, int kb,
                                 lce5_ksteps ks, char *raw, lce5_bars &bar, float (&acc)[ACC])
{
    char *ring = (char *)(((uintptr_t)raw + ATOM - 1) & ~(uintptr_t)(ATOM - 1));
    UNROLL
    for (int e = 0; e < ACC; e++) acc[e] = 0.0f; /* scale_d 1 throughout: a tile with no stage stays 0 */
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) mbarrier_init(&bar.full[s], 1), mbarrier_init(&bar.empty[s], 2);
        fence_proxy_async(); /* the inits visible to the TMA's complete_tx (the async proxy) */
    }
    __syncthreads(); /* the barriers initialised */
    if (threadIdx.x == CONSUMERS)
        lce5_produce<AT, BT>(ma, mb, m0, n0, kb, ks, ring, bar);
    else if (threadIdx.x < CONSUMERS)
        lce5_consume<AT, BT>(ks, ring, bar, acc);
}

/* the row and column (within the block's tile) of accumulator e of this thread */
static __device__ int lce5_row(int r)
{
    return threadIdx.x / 128 * 64 + threadIdx.x / 32 % 4 * 16 + threadIdx.x % 32 / 4 + 8 * r;
}
static __device__ int lce5_col(int e) { return 8 * (e / 4) + 2 * (threadIdx.x % 4) + e % 2; }

#define V5_BOUNDS __launch_bounds__(THREADS, 1) /* 288 threads: up to 224 registers each */

/* v4's forward on wgmma's fragment: a quad holds a row's 256 columns, 64 per lane, and columns 8 i + .. with
 * i < 16 are the first [.., 128] tile, i >= 16 the second: each lane's max first, then one exp each, merged
 * over the quad: the tile's partial, no shared memory */
__global__ void V5_BOUNDS lce5_forward_kernel(const __grid_constant__ CUtensorMap map_x,
                                              const __grid_constant__ CUtensorMap map_w, int N, int V,
                                              int H, const int32_t *target /* (N,) */,
                                              float *part /* (2, ceil(V / 128), N) */,
                                              float *z_target /* (N,) */)
{
    DYNAMIC_SHARED(char, raw);
    __shared__ lce5_bars bar;
    long long tm, tv;
    lce4_block_tile(blockIdx.x, lce4_tiles(N), lce4_tiles_n(V), &tm, &tv);
    int n0 = (int)(tm * BM), v0 = (int)(tv * BN);
    lce5_ksteps all = {NULL, (H + BK - 1) / BK};
    float acc[ACC];
    lce5_gemm<false, false>(&map_x, &map_w, n0, v0, 0, all, raw, bar, acc);
    if (threadIdx.x >= CONSUMERS) return;
    long long tiles_v = lce4_tiles(V);
    UNROLL
    for (int r = 0; r < 2; r++) {
        long long n = n0 + lce5_row(r);
        int tg = n < N ? target[n] : LCE_IGNORE;
        UNROLL
        for (int hf = 0; hf < 2; hf++) {
            lce_lse_acc a = lce_lse_init();
            UNROLL
            for (int q = 0; q < 16; q++)
                UNROLL
                for (int e = 0; e < 2; e++) {
                    int i = 16 * hf + q, v = v0 + lce5_col(4 * i + e);
                    float z = acc[4 * i + 2 * r + e];
                    if (v >= V) continue;
                    a.m = fmaxf(a.m, z);
                    if (v == tg) z_target[n] = z;
                }
            UNROLL
            for (int q = 0; q < 16; q++)
                UNROLL
                for (int e = 0; e < 2; e++) {
                    int i = 16 * hf + q;
                    if (v0 + lce5_col(4 * i + e) < V) a.s += expf(acc[4 * i + 2 * r + e] - a.m);
                }
            UNROLL
            for (int off = 1; off < 4; off *= 2) {
                lce_lse_acc o;
                o.m = __shfl_xor_sync(0xffffffffu, a.m, off);
                o.s = __shfl_xor_sync(0xffffffffu, a.s, off);
                a = lce_lse_merge_keep_nan(a, o);
            }
            long long pt = 2 * tv + hf;
            if (threadIdx.x % 4 == 0 && n < N && pt < tiles_v && tg != LCE_IGNORE) {
                part[pt * N + n] = a.m;
                part[(tiles_v + pt) * N + n] = a.s;
            }
        }
    }
}

/* v4's G and the filter's vote, on wgmma's fragment: columns i < 16 of a lane are the first [128, 128] filter
 * tile, i >= 16 the second; each warp votes for both, and a tile is kept if any of the 8 warps holds a value
 * that is not negligible */
__global__ void V5_BOUNDS lce5_grad_kernel(const __grid_constant__ CUtensorMap map_x,
                                           const __grid_constant__ CUtensorMap map_w, int N, int H,
                                           int c0, int vc, int ldg, const int32_t *target /* (N,) */,
                                           const float *lse /* (N,) */, const float *scale /* (1,) */,
                                           const float *dloss /* (1,) */, int filter, bf16 *G /* (N, ldg) */,
                                           int *skip /* (ceil(N / 128), ldg / 128) */,
                                           unsigned *skipped /* (1,) */)
{
    DYNAMIC_SHARED(char, raw);
    __shared__ lce5_bars bar;
    __shared__ int votes[CONSUMERS / 32][2];
    long long tm, tc;
    lce4_block_tile(blockIdx.x, lce4_tiles(N), lce4_tiles_n(vc), &tm, &tc);
    int n0 = (int)(tm * BM), j0 = (int)(tc * BN);
    lce5_ksteps all = {NULL, (H + BK - 1) / BK};
    float acc[ACC];
    lce5_gemm<false, false>(&map_x, &map_w, n0, c0 + j0, 0, all, raw, bar, acc);
    if (threadIdx.x < CONSUMERS) {
        float sc = scale[0] * dloss[0];
        bool busy[2] = {false, false};
        UNROLL
        for (int r = 0; r < 2; r++) {
            long long n = n0 + lce5_row(r);
            if (n >= N) continue;
            int tg = target[n];
            float ln = tg == LCE_IGNORE ? 0.0f : lse[n];
            UNROLL
            for (int i = 0; i < ACC / 4; i++) {
                long long c = j0 + lce5_col(4 * i);
                bf16 pair[2];
                UNROLL
                for (int e = 0; e < 2; e++) {
                    float gv = 0.0f;
                    if (tg != LCE_IGNORE && c + e < vc) {
                        float d = lce_softmax_minus_onehot(acc[4 * i + 2 * r + e], ln, c0 + c + e == tg);
                        busy[i / 16] = busy[i / 16] || !lce_grad_negligible(d);
                        gv = d * sc; /* lce_grad's arithmetic: the same product in the same order */
                    }
                    pair[e] = bf16_from_f32(gv);
                }
                *(uint32_t *)(G + n * ldg + c) = (uint32_t)pair[0] | (uint32_t)pair[1] << 16; /* c even */
            }
        }
        int any0 = __any_sync(0xffffffffu, busy[0]), any1 = __any_sync(0xffffffffu, busy[1]);
        if (threadIdx.x % 32 == 0) votes[threadIdx.x / 32][0] = any0, votes[threadIdx.x / 32][1] = any1;
    }
    __syncthreads(); /* every warp's votes are in before the flags are set */
    if (threadIdx.x < 2 && j0 + (int)threadIdx.x * FLAG < vc) { /* a half that holds columns of the chunk */
        int h = threadIdx.x, kept = 0;
        for (int w = 0; w < CONSUMERS / 32; w++) kept = kept || votes[w][h];
        int drop = filter && !kept;
        skip[tm * (ldg / FLAG) + 2 * tc + h] = drop;
        if (drop) atomicAdd(skipped, 1u);
    }
}

/* dx[n0 .., h0 ..] (+)= G . W over the row tile's kept vocabulary tiles: A = G (K = the chunk's columns
 * along its rows), B = W's rows c0 + k (K down the rows: MN-major); H even, so a lane's two columns are one
 * 8-byte access (v4's even-H path) */
__global__ void V5_BOUNDS lce5_dx_kernel(const __grid_constant__ CUtensorMap map_g,
                                         const __grid_constant__ CUtensorMap map_w, int N, int H, int c0,
                                         int ldg, const int *dx_tiles /* (ceil(N / 128), ldg / 128) */,
                                         const int *dx_count /* (ceil(N / 128),) */, int first, int last,
                                         float *dx_acc /* (N, H) */, bf16 *dx /* (N, H) */)
{
    DYNAMIC_SHARED(char, raw);
    __shared__ lce5_bars bar;
    long long tm, th;
    lce4_block_tile(blockIdx.x, lce4_tiles(N), lce4_tiles_n(H), &tm, &th);
    int n0 = (int)(tm * BM), h0 = (int)(th * BN);
    lce5_ksteps ks = {dx_tiles + tm * (ldg / FLAG), dx_count[tm] * (FLAG / BK)};
    float acc[ACC];
    lce5_gemm<false, true>(&map_g, &map_w, n0, h0, c0, ks, raw, bar, acc); /* W's map is all of W */
    if (threadIdx.x >= CONSUMERS) return;
    UNROLL
    for (int r = 0; r < 2; r++) {
        long long n = n0 + lce5_row(r);
        if (n >= N) continue;
        UNROLL
        for (int i = 0; i < ACC / 4; i++) {
            long long col = h0 + lce5_col(4 * i), at = n * H + col;
            if (col >= H) continue;
            float v0 = acc[4 * i + 2 * r], v1 = acc[4 * i + 2 * r + 1];
            if (!first) {
                float2 p = *(const float2 *)(dx_acc + at);
                v0 += p.x, v1 += p.y;
            }
            if (last)
                *(uint32_t *)(dx + at) = (uint32_t)bf16_from_f32(v0) | (uint32_t)bf16_from_f32(v1) << 16;
            else
                *(float2 *)(dx_acc + at) = make_float2(v0, v1);
        }
    }
}

/* dW[j0 .., h0 ..] = G^T . x over the vocabulary tile's kept row tiles: A = G^T read from G (K = n down its
 * rows: MN-major), B = x (K = n down its rows: MN-major) */
__global__ void V5_BOUNDS lce5_dw_kernel(const __grid_constant__ CUtensorMap map_g,
                                         const __grid_constant__ CUtensorMap map_x, int N, int H, int vc,
                                         const int *dw_tiles /* (ldg / 128, ceil(N / 128)) */,
                                         const int *dw_count /* (ldg / 128,) */, float *dWc /* (vc, H) */)
{
    DYNAMIC_SHARED(char, raw);
    __shared__ lce5_bars bar;
    long long tv, th;
    lce4_block_tile(blockIdx.x, lce4_tiles(vc), lce4_tiles_n(H), &tv, &th);
    int j0 = (int)(tv * BM), h0 = (int)(th * BN);
    lce5_ksteps ks = {dw_tiles + tv * lce4_tiles(N), dw_count[tv] * (FLAG / BK)};
    float acc[ACC];
    lce5_gemm<true, true>(&map_g, &map_x, j0, h0, 0, ks, raw, bar, acc);
    if (threadIdx.x >= CONSUMERS) return;
    UNROLL
    for (int r = 0; r < 2; r++) {
        long long j = j0 + lce5_row(r);
        if (j >= vc) continue;
        UNROLL
        for (int i = 0; i < ACC / 4; i++) {
            long long col = h0 + lce5_col(4 * i);
            if (col < H)
                *(float2 *)(dWc + j * H + col) = make_float2(acc[4 * i + 2 * r], acc[4 * i + 2 * r + 1]);
        }
    }
}

/* ---- launchers and device memory ----------------------------------------------------------------------- */

/* NULL on compute capability 9.0 (sm_90a: wgmma and the TMA) when this GPU fits every launch */
extern "C" const char *lce5_device_unfit(void)
{
    static char why[160];
    const cuda_device_info *dev = cuda_device_info_get();
    if (dev && dev->cc != 90) {
        snprintf(why, sizeof why, "needs compute capability 9.0 (sm_90a's wgmma and TMA), this GPU has %d.%d",
                 dev->cc / 10, dev->cc % 10);
        return why;
    }
    const cuda_launch_need needs[] = {{(const void *)lce5_forward_kernel, THREADS, SMEM_BYTES, 90, 0},
                                      {(const void *)lce5_grad_kernel, THREADS, SMEM_BYTES, 90, 0},
                                      {(const void *)lce5_dx_kernel, THREADS, SMEM_BYTES, 90, 0},
                                      {(const void *)lce5_dw_kernel, THREADS, SMEM_BYTES, 90, 0}};
    return cuda_fit(needs, 4);
}

static void lce5_opt_in(void)
{
    static int done;
    if (done) return;
    const cudaFuncAttribute max_dyn = cudaFuncAttributeMaxDynamicSharedMemorySize;
    CUDA_CHECK(cudaFuncSetAttribute(lce5_forward_kernel, max_dyn, SMEM_BYTES));
    CUDA_CHECK(cudaFuncSetAttribute(lce5_grad_kernel, max_dyn, SMEM_BYTES));
    CUDA_CHECK(cudaFuncSetAttribute(lce5_dx_kernel, max_dyn, SMEM_BYTES));
    CUDA_CHECK(cudaFuncSetAttribute(lce5_dw_kernel, max_dyn, SMEM_BYTES));
    done = 1;
}

/* a bf16 (rows, cols) row-major tensor's map, boxes of box_rows x 64 columns, swizzled by 128 bytes; rows and
 * columns outside it read as zeros */
static CUtensorMap lce5_map(const bf16 *p, long long rows, long long cols, unsigned box_rows)
{
    return tma_map_2d(p, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (uint64_t)rows, (uint64_t)cols, (uint64_t)cols,
                      box_rows, BK, CU_TENSOR_MAP_SWIZZLE_128B);
}

static unsigned lce5_grid(long long m, long long n) { return (unsigned)(lce4_tiles(m) * lce4_tiles_n(n)); }

static lce_filter_count last_filter; /* what the last backward's filter skipped: the lesson prints it */

extern "C" lce_filter_count lce5_last_filter(void) { return last_filter; }

/* v4's forward with v5's kernel: the same workspace, v4's merge */
extern "C" float *lce5_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                               lce_cuda_saved *saved)
{
    int N = (int)d->N, V = (int)d->V, H = (int)d->H;
    lce5_opt_in();
    saved->x = x;
    saved->W = W;
    saved->target = target;
    saved->lse = (float *)dev_alloc_array(d->N, DT_F32, "lse [N] f32 (saved)");
    arena a;
    lce4_forward_workspace w;
    size_t bytes = ARENA_BYTES(a, lce4_carve_forward(&a, d, &w));
    arena_init(&a, dev_alloc(bytes, "workspace: tile partials [2,V/128,N] + z[target] + row losses + scale"),
               bytes);
    lce4_carve_forward(&a, d, &w);
    lce_launch_mean_scale(N, target, w.scale);
    CUtensorMap mx = lce5_map(x, N, H, BM), mw = lce5_map(W, V, H, BN);
    LAUNCH(lce5_forward_kernel, lce5_grid(N, V), THREADS, SMEM_BYTES)(mx, mw, N, V, H, target, w.part,
                                                                      w.z_target);
    CUDA_CHECK_LAST();
    lce4_launch_merge(N, V, target, w.part, w.z_target, saved->lse, w.row_loss);
    float *loss = (float *)dev_alloc_array(1, DT_F32, "loss [1] f32");
    lce_launch_loss(N, w.row_loss, w.scale, loss);
    dev_free(a.base);
    return loss;
}

/* the maps one backward reads: x and W for G, G (boxes of 128 and of 64 rows) and W and x in slabs of 64 */
struct lce5_maps {
    CUtensorMap x, w, g, w_slab, g_slab, x_slab;
};

/* one vocabulary chunk [c0, c0 + vc): G and its flags, the kept tiles' lists (v4's), then dx and dW */
static void lce5_backward_chunk(const lce_dims *d, const lce_cuda_saved *s, const float *dloss, int filter,
                                const lce4_backward_workspace *w, const lce5_maps *m, int c0, int vc,
                                bf16 *dx, float *dW)
{
    int N = (int)d->N, V = (int)d->V, H = (int)d->H, ldg = (int)lce4_chunk_cols(V);
    int tn = (int)lce4_tiles(N), tc = (int)lce4_tiles(vc);
    int first = c0 == 0, last = (long long)c0 + ldg >= V;
    LAUNCH(lce5_grad_kernel, lce5_grid(N, vc), THREADS, SMEM_BYTES)(m->x, m->w, N, H, c0, vc, ldg,
                                                                    s->target, s->lse, w->scale, dloss,
                                                                    filter, w->G, w->skip, w->skipped);
    CUDA_CHECK_LAST();
    lce4_launch_lists(tn, tc, ldg / FLAG, w);
    LAUNCH(lce5_dx_kernel, lce5_grid(N, H), THREADS, SMEM_BYTES)(m->g, m->w_slab, N, H, c0, ldg, w->dx_tiles,
                                                                 w->dx_count, first, last, w->dx_acc, dx);
    CUDA_CHECK_LAST();
    LAUNCH(lce5_dw_kernel, lce5_grid(vc, H), THREADS, SMEM_BYTES)(m->g_slab, m->x_slab, N, H, vc, w->dw_tiles,
                                                                  w->dw_count, dW + (long long)c0 * H);
    CUDA_CHECK_LAST();
}

extern "C" void lce5_backward(const lce_dims *d, int filter, lce_cuda_saved *saved, const float *dloss,
                              bf16 **dx, float **dW)
{
    long long N = (long long)d->N, V = (long long)d->V, H = (long long)d->H, ldg = lce4_chunk_cols(V);
    lce5_opt_in();
    bf16 *gx = (bf16 *)dev_alloc_array(lce_x_count(d), DT_BF16, "dx [N,H] bf16");
    float *gw = (float *)dev_alloc_array(lce_w_count(d), DT_F32, "dW [V,H] f32");
    arena a;
    lce4_backward_workspace w;
    size_t bytes = ARENA_BYTES(a, lce4_carve_backward(&a, d, &w));
    arena_init(&a, dev_alloc(bytes, "workspace: G [N,8192] bf16 + tile flags, lists + dx_acc [N,H] f32"),
               bytes);
    lce4_carve_backward(&a, d, &w);
    CUDA_CHECK(cudaMemset(w.skipped, 0, sizeof *w.skipped));
    lce_launch_mean_scale(N, saved->target, w.scale);
    lce5_maps m = {lce5_map(saved->x, N, H, BM), lce5_map(saved->W, V, H, BN), lce5_map(w.G, N, ldg, BM),
                   lce5_map(saved->W, V, H, 64), lce5_map(w.G, N, ldg, 64), lce5_map(saved->x, N, H, 64)};
    for (long long c0 = 0; c0 < V; c0 += ldg) /* the chunks in order: dx's fp32 sums meet in a fixed order */
        lce5_backward_chunk(d, saved, dloss, filter, &w, &m, (int)c0, (int)(V - c0 < ldg ? V - c0 : ldg), gx,
                            gw);
    unsigned skipped;
    CUDA_CHECK(cudaMemcpy(&skipped, w.skipped, sizeof skipped, cudaMemcpyDeviceToHost));
    last_filter.filter = filter;
    last_filter.tiles = (unsigned long long)lce4_tiles(N) * (unsigned long long)lce4_tiles(V);
    last_filter.skipped = skipped;
    dev_free(a.base);
    dev_free(saved->lse);
    saved->lse = NULL;
    *dx = gx;
    *dW = gw;
}
