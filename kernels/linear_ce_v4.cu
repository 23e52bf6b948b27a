/* linear_ce_v4.cu - lesson 5, cuda-v4: Cut Cross-Entropy's shape, every product a [128, 128]-tile GEMM on bf16 WMMA.
 *
 * v3 stages synchronously into [32, 64] tiles, walks V per row block, recomputes each logit twice in backward and
 * sends fp32 slabs of dx and dW through global memory every two tiles. Here K streams 64 at a time through a
 * 3-stage cp.async pipeline into [128, 128] tiles, 4 warps of [64, 64], blocks grouped 16 row tiles at a time (x reused from L2).
 * Forward: a block per (row tile, vocabulary tile) writes each row's partial (max, sum exp); a warp per row merges
 * them in a fixed order (no float atomics). Backward, per 8192-row vocabulary chunk: a block per tile recomputes
 * its logits once into G = (softmax - onehot) * dloss / n_valid (bf16, chunk buffer) and CCE's filter flag; then
 * dx += G W and dW = G^T x skip the filtered tiles, one writer per output tile, dW summed over all N in registers.
 * Target (docs/lesson-5.md): forward + backward within 1.3x of the time model's cuBLAS figure for the same four
 * products at the seed's size. */
#include "linear_ce_math.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_fit.h"
#include "runtime/launch.h"

#include <cuda_bf16.h>
#include <mma.h>
/* cuda_pipeline.h brings cuda_awbarrier.h, whose arrival_token constructor shadows its own member (-Wshadow) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#include <cuda_pipeline.h>
#pragma GCC diagnostic pop

namespace wmma = nvcuda::wmma;

#define FRAG 16                                    /* m, n and k of one bf16 WMMA fragment */
#define FRAGS (LCE4_WARP_TILE / FRAG)              /* fragments along each side of a warp's quarter */
#define LD_KROW (LCE4_TILE_K + LCE4_PAD_BF16)      /* a stage stored [128][64]: K along its rows (bf16) */
#define LD_KCOL (LCE4_TILE + LCE4_PAD_BF16)        /* a stage stored [64][128]: K down its rows (bf16) */
#define LDO (LCE4_TILE + LCE4_PAD_F32)             /* the fp32 output tile (f32) */
#define STEPS_PER_TILE (LCE4_TILE / LCE4_TILE_K)   /* K steps per 128 of K: one filter flag */

static_assert(LCE4_WARPS * LCE4_WARP_TILE * LCE4_WARP_TILE == LCE4_TILE * LCE4_TILE, "4 warps of [64, 64]");
static_assert(LCE4_TILE_K * LD_KCOL * 2 <= LCE4_STAGE_OPERAND_BYTES, "either stage layout fits its slot");
static_assert((FRAG * LD_KROW * 2) % 32 == 0 && (FRAG * LD_KCOL * 2) % 32 == 0 && (FRAG * LDO * 4) % 32 == 0 &&
                  LCE4_STAGE_OPERAND_BYTES % 32 == 0,
              "every fragment's first element is 32-byte aligned (WMMA's pointer rule)");
static_assert(LCE4_TILE % LCE_WARP == 0 && LCE4_TILE % LCE4_TILE_K == 0, "epilogue lanes and K steps are whole");
static_assert(LCE4_THREADS == LCE4_TILE, "the forward's epilogue stores row i's partial from thread i");

typedef wmma::fragment<wmma::accumulator, FRAG, FRAG, FRAG, float> lce4_acc;

/* A bf16 matrix in global memory: rows x cols, row stride ld (elements). */
struct lce4_matrix {
    const bf16 *p;
    long long rows, cols, ld;
};

/* 16-byte copies need every row and the base 16-byte aligned */
static __device__ bool lce4_vec(lce4_matrix m)
{
    return m.ld % 8 == 0 && m.cols % 8 == 0 && ((unsigned long long)m.p & 15) == 0;
}

/* The K steps a GEMM takes: n of them, less those whose 128-wide K tile the filter dropped
 * (flags[(k / STEPS_PER_TILE) * stride] != 0); flags NULL: every step. */
struct lce4_ksteps {
    const int *flags;
    long long stride;
    int n;
};

static __device__ bool lce4_active(lce4_ksteps s, int k)
{
    return !s.flags || !s.flags[(long long)(k / STEPS_PER_TILE) * s.stride];
}

/* the first active step >= k, or s.n */
static __device__ int lce4_next_step(lce4_ksteps s, int k)
{
    while (k < s.n && !lce4_active(s, k)) k = (k / STEPS_PER_TILE + 1) * STEPS_PER_TILE;
    return k < s.n ? k : s.n;
}

template <typename L> struct lce4_is_row { static constexpr bool value = false; };
template <> struct lce4_is_row<wmma::row_major> { static constexpr bool value = true; };

/* dst [R][ldd] (shared) = the R x C block of m at (r0, c0), zero outside m. Consecutive threads take consecutive
 * 16-byte chunks of a row: cp.async where rows are 16-byte aligned, plain loads and stores otherwise. */
template <int R, int C>
static __device__ void lce4_stage(bf16 *dst, int ldd, lce4_matrix m, long long r0, long long c0, bool vec)
{
    for (int e = threadIdx.x; e < R * (C / 8); e += LCE4_THREADS) {
        int r = e / (C / 8), c = e % (C / 8) * 8;
        long long gr = r0 + r, gc = c0 + c;
        bool in = gr < m.rows && gc < m.cols;
        const bf16 *src = in ? m.p + gr * m.ld + gc : m.p;
        if (vec) {
            __pipeline_memcpy_async(dst + r * ldd + c, src, 16, in ? 0 : 16); /* gc + 8 <= cols: both % 8 == 0 */
        } else {
            bf16 t[8];
            for (int k = 0; k < 8; k++) t[k] = in && gc + k < m.cols ? src[k] : (bf16)0;
            uint4 v;
            memcpy(&v, t, sizeof v);
            *(uint4 *)(dst + r * ldd + c) = v;
        }
    }
}

/* Stage slot `slot` = K step k of A (M x K, layout AL) at rows m0 and of B (K x N, layout BL) at columns n0. A
 * row-major A and a column-major B are stored K along the row ([128][64]); the others K down the rows ([64][128]).
 * Either way 8 consecutive threads (a phase of a 16-byte store) fill 128 contiguous bytes of one row. */
template <typename AL, typename BL>
static __device__ void lce4_stage_step(unsigned char *smem, int slot, lce4_matrix A, lce4_matrix B, long long m0,
                                       long long n0, int k, bool vec)
{
    bf16 *a = (bf16 *)(smem + 2 * slot * LCE4_STAGE_OPERAND_BYTES);
    bf16 *b = (bf16 *)(smem + (2 * slot + 1) * LCE4_STAGE_OPERAND_BYTES);
    long long k0 = (long long)k * LCE4_TILE_K;
    if (lce4_is_row<AL>::value)
        lce4_stage<LCE4_TILE, LCE4_TILE_K>(a, LD_KROW, A, m0, k0, vec);
    else
        lce4_stage<LCE4_TILE_K, LCE4_TILE>(a, LD_KCOL, A, k0, m0, vec);
    if (lce4_is_row<BL>::value)
        lce4_stage<LCE4_TILE_K, LCE4_TILE>(b, LD_KCOL, B, k0, n0, vec);
    else
        lce4_stage<LCE4_TILE, LCE4_TILE_K>(b, LD_KROW, B, n0, k0, vec);
}

/* acc += the staged step in slot `slot`; warp w owns output rows [64 (w / 2), +64) and columns [64 (w % 2), +64):
 * each A fragment serves 4 B fragments and each B fragment 4 A fragments. */
template <typename AL, typename BL>
static __device__ void lce4_mma_step(const unsigned char *smem, int slot, lce4_acc (&acc)[FRAGS][FRAGS])
{
    const bf16 *a = (const bf16 *)(smem + 2 * slot * LCE4_STAGE_OPERAND_BYTES);
    const bf16 *b = (const bf16 *)(smem + (2 * slot + 1) * LCE4_STAGE_OPERAND_BYTES);
    int warp = threadIdx.x / LCE_WARP, wm = warp / 2 * LCE4_WARP_TILE, wn = warp % 2 * LCE4_WARP_TILE;
    bool arow = lce4_is_row<AL>::value, brow = lce4_is_row<BL>::value;
    for (int kk = 0; kk < LCE4_TILE_K; kk += FRAG) {
        wmma::fragment<wmma::matrix_a, FRAG, FRAG, FRAG, __nv_bfloat16, AL> fa[FRAGS];
        for (int i = 0; i < FRAGS; i++) {
            const bf16 *p = arow ? a + (wm + FRAG * i) * LD_KROW + kk : a + kk * LD_KCOL + wm + FRAG * i;
            wmma::load_matrix_sync(fa[i], (const __nv_bfloat16 *)p, arow ? LD_KROW : LD_KCOL);
        }
        for (int j = 0; j < FRAGS; j++) {
            wmma::fragment<wmma::matrix_b, FRAG, FRAG, FRAG, __nv_bfloat16, BL> fb;
            const bf16 *p = brow ? b + kk * LD_KCOL + wn + FRAG * j : b + (wn + FRAG * j) * LD_KROW + kk;
            wmma::load_matrix_sync(fb, (const __nv_bfloat16 *)p, brow ? LD_KCOL : LD_KROW);
            for (int i = 0; i < FRAGS; i++) wmma::mma_sync(acc[i][j], fa[i], fb, acc[i][j]);
        }
    }
}

/* The output tile (shared, [128][LDO] f32) = A[m0 .. m0 + 128, :] . B[:, n0 .. n0 + 128] over the K steps s
 * takes, through the LCE4_STAGES-deep pipeline: while step k is multiplied, steps k + 1 and k + 2 are in flight.
 * The tile reuses the stages' bytes; every thread may read any of it on return. */
template <typename AL, typename BL>
static __device__ void lce4_gemm_tile(unsigned char *smem, lce4_matrix A, lce4_matrix B, long long m0, long long n0,
                                      lce4_ksteps s)
{
    bool vec = lce4_vec(A) && lce4_vec(B);
    lce4_acc acc[FRAGS][FRAGS];
    for (int i = 0; i < FRAGS; i++)
        for (int j = 0; j < FRAGS; j++) wmma::fill_fragment(acc[i][j], 0.0f);
    int fetch = lce4_next_step(s, 0), slot = 0;
    for (int st = 0; st < LCE4_STAGES - 1; st++) {
        if (fetch < s.n) {
            lce4_stage_step<AL, BL>(smem, st, A, B, m0, n0, fetch, vec);
            fetch = lce4_next_step(s, fetch + 1);
        }
        __pipeline_commit(); /* an empty group too: the wait below counts groups */
    }
    for (int k = 0; k < s.n; k++) {
        if (!lce4_active(s, k)) continue; /* uniform: every thread reads the same flag */
        __pipeline_wait_prior(LCE4_STAGES - 2);
        __syncthreads(); /* step k has landed for every thread, and every warp is done with the slot refilled next */
        if (fetch < s.n) {
            lce4_stage_step<AL, BL>(smem, (slot + LCE4_STAGES - 1) % LCE4_STAGES, A, B, m0, n0, fetch, vec);
            fetch = lce4_next_step(s, fetch + 1);
        }
        __pipeline_commit();
        lce4_mma_step<AL, BL>(smem, slot, acc);
        slot = (slot + 1) % LCE4_STAGES;
    }
    __pipeline_wait_prior(0);
    __syncthreads(); /* no copy in flight and every fragment read before the stages' bytes become the output tile */
    float *z = (float *)smem;
    int warp = threadIdx.x / LCE_WARP, wm = warp / 2 * LCE4_WARP_TILE, wn = warp % 2 * LCE4_WARP_TILE;
    for (int i = 0; i < FRAGS; i++)
        for (int j = 0; j < FRAGS; j++)
            wmma::store_matrix_sync(z + (wm + FRAG * i) * LDO + wn + FRAG * j, acc[i][j], LDO, wmma::mem_row_major);
    __syncthreads(); /* the whole tile is stored before the epilogue's row passes read it */
}

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 12.5% (z[target]: 4 bytes from the one lane whose
 * column holds it; the partials whole sectors), shared memory <= 4 wavefronts per request (16-byte stores of a warp:
 * 4 at best). Logits x W^T of one (row tile, vocabulary tile); each counted row's partial (max, sum exp) over
 * the tile's columns, and z[target] from the one tile that holds it. */
__global__ void lce4_forward_kernel(int N, int V, int H, const bf16 *x /* (N, H) */, const bf16 *W /* (V, H) */,
                                    const int32_t *target /* (N,) */, float *part /* (2, ceil(V / 128), N) */,
                                    float *z_target /* (N,) */)
{
    DYNAMIC_SHARED(unsigned char, smem);
    long long tm, tv;
    lce4_block_tile(blockIdx.x, lce4_tiles(N), lce4_tiles(V), &tm, &tv);
    long long n0 = tm * LCE4_TILE, v0 = tv * LCE4_TILE;
    lce4_matrix A = {x, N, H, H}, B = {W, V, H, H};
    lce4_ksteps all = {NULL, 0, (H + LCE4_TILE_K - 1) / LCE4_TILE_K};
    lce4_gemm_tile<wmma::row_major, wmma::col_major>(smem, A, B, n0, v0, all);
    const float *z = (const float *)smem;
    lce_lse_acc *rows = (lce_lse_acc *)(smem + LCE4_ROWS_AT); /* [128] the rows' partials, then one store each */
    int warp = threadIdx.x / LCE_WARP, lane = threadIdx.x % LCE_WARP;
    for (int i = warp; i < LCE4_TILE; i += LCE4_WARPS) { /* a warp per row, lanes over interleaved columns */
        long long n = n0 + i;
        int t = n < N ? target[n] : LCE_IGNORE;
        if (t == LCE_IGNORE) continue; /* uniform across the warp */
        lce_lse_acc a = lce_lse_init();
        for (int q = lane; q < LCE4_TILE; q += LCE_WARP) {
            if (v0 + q >= V) break;
            float zv = z[i * LDO + q];
            a = lce_lse_add(a, zv);
            if (v0 + q == t) z_target[n] = zv;
        }
        a = lce_warp_lse(a); /* lane 0 always holds a column (v0 < V), so a NaN row stays NaN */
        if (lane == 0) rows[i] = a;
    }
    __syncthreads(); /* every row's partial is in before thread i stores row i's */
    long long n = n0 + threadIdx.x, tiles_v = lce4_tiles(V);
    if (n < N && target[n] != LCE_IGNORE) {
        part[tv * N + n] = rows[threadIdx.x].m;
        part[(tiles_v + tv) * N + n] = rows[threadIdx.x].s;
    }
}

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 80%, no shared memory. A thread per row merges
 * the row's partials in vocabulary order (consecutive threads read consecutive rows of part): a fixed order, so
 * lse is the same bits on every run, with no float atomics. */
__global__ void lce4_merge_kernel(int N, int V, const int32_t *target /* (N,) */,
                                  const float *part /* (2, ceil(V / 128), N) */, const float *z_target /* (N,) */,
                                  float *lse /* (N,) */, float *row_loss /* (N,) */)
{
    long long n = (long long)blockIdx.x * LCE4_REDUCE_THREADS + threadIdx.x, tiles_v = lce4_tiles(V);
    if (n >= N) return;
    float l = 0.0f, loss = 0.0f; /* an ignored row's */
    if (target[n] != LCE_IGNORE) {
        /* from tile 0's partial, not from the empty pair: merged into an empty pair, a partial whose max is -inf
         * and whose sum is NaN (a NaN row) would be dropped */
        lce_lse_acc a = {part[n], part[tiles_v * N + n]};
        for (long long j = 1; j < tiles_v; j++) {
            lce_lse_acc b = {part[j * N + n], part[(tiles_v + j) * N + n]};
            a = lce_lse_merge(a, b);
        }
        l = lce_lse_finish(a);
        loss = lce_row_loss(l, z_target[n]);
    }
    lse[n] = l;
    row_loss[n] = loss;
}

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 80%, shared memory <= 4 wavefronts per request.
 * Backward's logits, once per tile of the chunk [c0, c0 + vc): G = bf16((softmax - onehot) * sc) into the chunk
 * buffer (columns past V, ignored rows: 0), and the tile's filter flag. */
__global__ void lce4_grad_kernel(int N, int V, int H, int c0, int vc, int ldg, const bf16 *x /* (N, H) */,
                                 const bf16 *W /* (V, H) */, const int32_t *target /* (N,) */,
                                 const float *lse /* (N,) */, const float *scale /* (1,) */,
                                 const float *dloss /* (1,) */, int filter, bf16 *G /* (N, ldg) */,
                                 int *skip /* (ceil(N / 128), ldg / 128) */, unsigned *skipped /* (1,) */)
{
    DYNAMIC_SHARED(unsigned char, smem);
    long long tm, tc;
    lce4_block_tile(blockIdx.x, lce4_tiles(N), lce4_tiles(vc), &tm, &tc);
    long long n0 = tm * LCE4_TILE, j0 = tc * LCE4_TILE, v0 = c0 + j0;
    lce4_matrix A = {x, N, H, H}, B = {W, V, H, H};
    lce4_ksteps all = {NULL, 0, (H + LCE4_TILE_K - 1) / LCE4_TILE_K};
    lce4_gemm_tile<wmma::row_major, wmma::col_major>(smem, A, B, n0, v0, all);
    const float *z = (const float *)smem;
    int *votes = (int *)(smem + LCE4_ROWS_AT); /* [LCE4_WARPS] past the output tile */
    float sc = scale[0] * dloss[0];
    int warp = threadIdx.x / LCE_WARP, lane = threadIdx.x % LCE_WARP;
    bool busy = false;
    for (int i = warp; i < LCE4_TILE; i += LCE4_WARPS) {
        long long n = n0 + i;
        if (n >= N) break; /* uniform across the warp */
        int t = target[n];
        float ln = t == LCE_IGNORE ? 0.0f : lse[n];
        for (int q = lane; q < LCE4_TILE; q += LCE_WARP) {
            float g = 0.0f;
            if (t != LCE_IGNORE && j0 + q < vc) {
                float d = lce_softmax_minus_onehot(z[i * LDO + q], ln, v0 + q == t);
                busy = busy || !lce_grad_negligible(d);
                g = d * sc; /* lce_grad's arithmetic: the same product in the same order */
            }
            G[n * ldg + j0 + q] = bf16_from_f32(g);
        }
    }
    int any = __any_sync(0xffffffffu, busy);
    if (lane == 0) votes[warp] = any;
    __syncthreads(); /* every warp's vote is in before thread 0 reads them */
    if (threadIdx.x == 0) {
        int negligible = 1;
        for (int w = 0; w < LCE4_WARPS; w++) negligible = negligible && !votes[w];
        skip[tm * (ldg / LCE4_TILE) + tc] = filter && negligible;
        if (filter && negligible) atomicAdd(skipped, 1u);
    }
}

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 80%, shared memory <= 4 wavefronts per request.
 * dx rows of one (row tile, H tile) += G . W over the chunk's vocabulary rows, filtered tiles skipped; the chunks'
 * sums meet in dx_acc (f32) in chunk order and are rounded to bf16 once, after the last. */
__global__ void lce4_dx_kernel(int N, int H, int vc, int ldg, const bf16 *G /* (N, ldg) */,
                               const int *skip /* (ceil(N / 128), ldg / 128) */, const bf16 *Wc /* (vc, H) */,
                               int first, int last, float *dx_acc /* (N, H) */, bf16 *dx /* (N, H) */)
{
    DYNAMIC_SHARED(unsigned char, smem);
    long long tm, th;
    lce4_block_tile(blockIdx.x, lce4_tiles(N), lce4_tiles(H), &tm, &th);
    long long n0 = tm * LCE4_TILE, h0 = th * LCE4_TILE;
    lce4_matrix A = {G, N, ldg, ldg}, B = {Wc, vc, H, H};
    lce4_ksteps ks = {skip + tm * (ldg / LCE4_TILE), 1, (vc + LCE4_TILE_K - 1) / LCE4_TILE_K};
    lce4_gemm_tile<wmma::row_major, wmma::row_major>(smem, A, B, n0, h0, ks);
    const float *z = (const float *)smem;
    int warp = threadIdx.x / LCE_WARP, lane = threadIdx.x % LCE_WARP;
    for (int i = warp; i < LCE4_TILE; i += LCE4_WARPS) {
        long long n = n0 + i;
        if (n >= N) break;
        for (int q = lane; q < LCE4_TILE && h0 + q < H; q += LCE_WARP) {
            long long e = n * H + h0 + q;
            float v = first ? z[i * LDO + q] : dx_acc[e] + z[i * LDO + q];
            if (last)
                dx[e] = bf16_from_f32(v);
            else
                dx_acc[e] = v;
        }
    }
}

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 80%, shared memory <= 4 wavefronts per request.
 * dW rows of one (chunk vocabulary tile, H tile) = G^T . x over all N rows (K = N) in registers, filtered tiles
 * skipped: each dW element written once, by one block, with no fp32 round trip. */
__global__ void lce4_dw_kernel(int N, int H, int vc, int ldg, const bf16 *G /* (N, ldg) */,
                               const int *skip /* (ceil(N / 128), ldg / 128) */, const bf16 *x /* (N, H) */,
                               float *dWc /* (vc, H) */)
{
    DYNAMIC_SHARED(unsigned char, smem);
    long long tv, th;
    lce4_block_tile(blockIdx.x, lce4_tiles(vc), lce4_tiles(H), &tv, &th);
    long long j0 = tv * LCE4_TILE, h0 = th * LCE4_TILE;
    lce4_matrix A = {G, N, ldg, ldg}, B = {x, N, H, H}; /* A = G^T: G stored K (rows of x) by M (vocabulary) */
    lce4_ksteps ks = {skip + tv, ldg / LCE4_TILE, (N + LCE4_TILE_K - 1) / LCE4_TILE_K};
    lce4_gemm_tile<wmma::col_major, wmma::row_major>(smem, A, B, j0, h0, ks);
    const float *z = (const float *)smem;
    int warp = threadIdx.x / LCE_WARP, lane = threadIdx.x % LCE_WARP;
    for (int i = warp; i < LCE4_TILE; i += LCE4_WARPS) {
        long long j = j0 + i;
        if (j >= vc) break;
        for (int q = lane; q < LCE4_TILE && h0 + q < H; q += LCE_WARP) dWc[j * H + h0 + q] = z[i * LDO + q];
    }
}

/* the four GEMM-shaped kernels each take LCE4_SMEM_BYTES of dynamic shared memory: the version fits this GPU when
 * every one does (the small merge kernel fit any GPU from sm_80) */
extern "C" const char *lce4_device_unfit(void)
{
    const cuda_launch_need needs[] = {{(const void *)lce4_forward_kernel, LCE4_THREADS, LCE4_SMEM_BYTES, 80, 0},
                                      {(const void *)lce4_grad_kernel, LCE4_THREADS, LCE4_SMEM_BYTES, 80, 0},
                                      {(const void *)lce4_dx_kernel, LCE4_THREADS, LCE4_SMEM_BYTES, 80, 0},
                                      {(const void *)lce4_dw_kernel, LCE4_THREADS, LCE4_SMEM_BYTES, 80, 0}};
    return cuda_fit(needs, 4);
}

/* the GEMM kernels use more than 48 KiB of dynamic shared memory: opt in once per kernel */
static void lce4_opt_in(void)
{
    static int done;
    if (done) return;
    CUDA_CHECK(cudaFuncSetAttribute(lce4_forward_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, LCE4_SMEM_BYTES));
    CUDA_CHECK(cudaFuncSetAttribute(lce4_grad_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, LCE4_SMEM_BYTES));
    CUDA_CHECK(cudaFuncSetAttribute(lce4_dx_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, LCE4_SMEM_BYTES));
    CUDA_CHECK(cudaFuncSetAttribute(lce4_dw_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, LCE4_SMEM_BYTES));
    done = 1;
}

static unsigned lce4_grid(long long m, long long n) { return (unsigned)(lce4_tiles(m) * lce4_tiles(n)); }

void lce4_launch_forward(int N, int V, int H, const bf16 *x, const bf16 *W, const int32_t *target, float *part,
                         float *z_target, float *lse, float *row_loss)
{
    lce4_opt_in();
    LAUNCH(lce4_forward_kernel, lce4_grid(N, V), LCE4_THREADS, LCE4_SMEM_BYTES)(N, V, H, x, W, target, part,
                                                                               z_target);
    CUDA_CHECK_LAST();
    lce4_launch_merge(N, V, target, part, z_target, lse, row_loss);
}

void lce4_launch_merge(int N, int V, const int32_t *target, const float *part, const float *z_target, float *lse,
                       float *row_loss)
{
    unsigned blocks = (unsigned)(((long long)N + LCE4_REDUCE_THREADS - 1) / LCE4_REDUCE_THREADS); /* N near 2^31 */
    LAUNCH(lce4_merge_kernel, blocks, LCE4_REDUCE_THREADS, 0)(N, V, target, part, z_target, lse, row_loss);
    CUDA_CHECK_LAST();
}

void lce4_launch_backward_chunk(int N, int V, int H, int c0, int vc, int ldg, const bf16 *x, const bf16 *W,
                                const int32_t *target, const float *lse, const float *scale, const float *dloss,
                                int filter, bf16 *G, int *skip, unsigned *skipped, int first, int last,
                                float *dx_acc, bf16 *dx, float *dW)
{
    lce4_opt_in();
    LAUNCH(lce4_grad_kernel, lce4_grid(N, vc), LCE4_THREADS, LCE4_SMEM_BYTES)(N, V, H, c0, vc, ldg, x, W, target, lse,
                                                                             scale, dloss, filter, G, skip, skipped);
    CUDA_CHECK_LAST();
    const bf16 *Wc = W + (long long)c0 * H;
    LAUNCH(lce4_dx_kernel, lce4_grid(N, H), LCE4_THREADS, LCE4_SMEM_BYTES)(N, H, vc, ldg, G, skip, Wc, first, last,
                                                                          dx_acc, dx);
    CUDA_CHECK_LAST();
    LAUNCH(lce4_dw_kernel, lce4_grid(vc, H), LCE4_THREADS, LCE4_SMEM_BYTES)(N, H, vc, ldg, G, skip, x,
                                                                           dW + (long long)c0 * H);
    CUDA_CHECK_LAST();
}
