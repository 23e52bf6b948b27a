/* linear_ce_v5.cu - lesson 5, cuda-v5: v4 with every product in one layout, its fragments filled by 32-bit
 * shared-memory loads, and blocks of 8 warps on [128, 256] tiles.
 *
 * About half of what v4's K loop issues is fragment loads: nvcc compiles wmma::load_matrix_sync on a shared tile
 * to a load through a generic pointer per 32-bit word, or per 16-bit element where K runs down the staged rows
 * (dx's W, dW's G^T and x), each with a 64-bit address of its own (docs/lesson-5-appendix.md). Here:
 *   - every product is A (M, K) times B (N, K)^T, K contiguous in both: backward writes G^T beside G and
 *     transposes x once and each chunk's rows of W, so dx = G . (W_c^T)^T and dW_c = G^T . (x^T)^T stage rows
 *     of K as forward does;
 *   - each lane learns once where its fragments' elements sit in a stage (a tile of element indices loaded
 *     through WMMA). Where each 32-bit register holds two elements adjacent in a row, the lower first (PTX's
 *     mma fragments pack them so), a register is one shared-memory load at an offset fixed for the whole
 *     kernel; otherwise the block keeps wmma::load_matrix_sync. Same products, same sums either way;
 *   - a block is 8 of v4's [64, 64] warps on a [128, 256] output tile: each staged byte feeds twice the
 *     products of v4's [128, 128] tile of 4 warps, so staging costs a quarter less shared-memory traffic per
 *     product (one block of 8 warps per SM, as v4's two blocks of 4);
 *   - a warp reads the filter flags of 32 K tiles in one load (a ballot's bits), not one flag per K step.
 * Everything else (K steps, pipeline, block order, partials and filter flags per [128, 128], chunks) is v4's.
 * Target (docs/lesson-5.md): forward + backward at the seed's size within 1.3x of the time model's cuBLAS figure
 * for the same four products. */
#include "linear_ce_math.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_fit.h"
#include "runtime/launch.h"

#include <cuda_bf16.h>
#include <mma.h>
#include <string.h>
/* cuda_pipeline.h brings cuda_awbarrier.h, whose arrival_token constructor shadows its own member (-Wshadow) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#include <cuda_pipeline.h>
#pragma GCC diagnostic pop

namespace wmma = nvcuda::wmma;

#define FRAG 16                                  /* m, n and k of one bf16 WMMA fragment */
#define FRAGS (LCE4_WARP_TILE / FRAG)            /* fragments along each side of a warp's [64, 64] */
#define LDK (LCE4_TILE_K + LCE4_PAD_BF16)        /* a staged operand [rows][LDK] bf16: K along its rows */
#define LDO (LCE5_TILE_N + LCE4_PAD_F32)         /* the fp32 output tile [128][LDO] (f32) */
#define HALF LCE4_TILE                           /* the tile's halves along N: v4's [128, 128] tiles */
#define WARPS_N (LCE5_TILE_N / LCE4_WARP_TILE)   /* warps along the tile's columns */
#define STEPS_PER_TILE (LCE4_TILE / LCE4_TILE_K) /* K steps per 128 of K: one filter flag */
#define WORDS 4                                  /* 32-bit registers of a bf16 fragment: two elements each */

static_assert(LCE5_WARPS * LCE4_WARP_TILE * LCE4_WARP_TILE == LCE5_TILE_M * LCE5_TILE_N, "8 warps of [64, 64]");
static_assert(LCE5_TILE_M == HALF && LCE5_TILE_N == 2 * HALF, "two of v4's tiles side by side");
static_assert(HALF % LCE_WARP == 0 && LCE4_TILE % LCE4_TILE_K == 0, "epilogue lanes and K steps are whole");
static_assert(LCE5_ROWS_AT + 2 * LCE5_TILE_M * 8 <= LCE5_SMEM_BYTES, "the per-row pairs fit past the output tile");
static_assert(LCE5_THREADS == 2 * LCE5_TILE_M, "the forward's epilogue stores (half, row) from one thread each");
static_assert(LDK % 2 == 0 && LCE5_STAGE_A_BYTES % 32 == 0 && LCE5_STAGE_B_BYTES % 32 == 0 &&
                  (FRAG * LDO * 4) % 32 == 0,
              "stage rows start on a 32-bit word, fragments on 32 bytes (WMMA's pointer rule)");

typedef wmma::fragment<wmma::matrix_a, FRAG, FRAG, FRAG, __nv_bfloat16, wmma::row_major> lce5_a;
typedef wmma::fragment<wmma::matrix_b, FRAG, FRAG, FRAG, __nv_bfloat16, wmma::col_major> lce5_b;
typedef wmma::fragment<wmma::accumulator, FRAG, FRAG, FRAG, float> lce5_acc;
static_assert(lce5_a::num_elements == 2 * WORDS && lce5_b::num_elements == 2 * WORDS, "8 bf16 per lane");

/* A bf16 operand in global memory: rows x cols, K along the row (cols = K), row stride ld (elements). */
struct lce5_matrix {
    const bf16 *p;
    long long rows, cols, ld;
};

/* 16-byte copies need every row and the base 16-byte aligned */
static __device__ bool lce5_vec(lce5_matrix m)
{
    return m.ld % 8 == 0 && m.cols % 8 == 0 && ((unsigned long long)m.p & 15) == 0;
}

/* The K steps a GEMM takes: n of them, less those whose 128-wide K tile the filter dropped
 * (flags[(k / STEPS_PER_TILE) * stride] != 0); flags NULL: every step. */
struct lce5_ksteps {
    const int *flags;
    long long stride;
    int n;
};

/* The flags of 32 consecutive K tiles, read by a warp in one load and kept as a ballot's bits: a warp reads
 * global memory once per 64 K steps, not at every step (each read is a load the loop would wait for). */
struct lce5_window {
    int base;      /* the first tile of the 32; -1 before the first read */
    unsigned bits; /* bit t: tile base + t was dropped */
};

/* tile's flag, through w (reloaded when tile is outside it; tile is the same in every lane of the warp) */
static __device__ bool lce5_dropped(lce5_ksteps s, lce5_window &w, int tile)
{
    if (!s.flags) return false;
    if (w.base < 0 || tile < w.base || tile >= w.base + LCE_WARP) {
        int t = tile + (int)(threadIdx.x % LCE_WARP), tiles = (s.n + STEPS_PER_TILE - 1) / STEPS_PER_TILE;
        w.bits = __ballot_sync(0xffffffffu, t < tiles && s.flags[(long long)t * s.stride] != 0);
        w.base = tile;
    }
    return w.bits >> (tile - w.base) & 1u;
}

static __device__ bool lce5_active(lce5_ksteps s, lce5_window &w, int k)
{
    return !lce5_dropped(s, w, k / STEPS_PER_TILE);
}

/* the first active step >= k, or s.n */
static __device__ int lce5_next_step(lce5_ksteps s, lce5_window &w, int k)
{
    while (k < s.n && !lce5_active(s, w, k)) k = (k / STEPS_PER_TILE + 1) * STEPS_PER_TILE;
    return k < s.n ? k : s.n;
}

/* Where a lane's fragment registers sit in a stage: register q of an a (b) fragment whose first element is at
 * stage element e holds elements e + a[q] and e + a[q] + 1 (b[q]), when paired. */
struct lce5_words {
    int a[WORDS], b[WORDS];
    int paired; /* 1 in every thread of the block, or 0 in every one */
};

/* scratch: 528 bytes of shared memory. Its first 256 bf16, filled with 0 .. 255, are as a row-major a (ldm 16)
 * element (r, k) = 16r + k, and as a column-major b (ldm 16) element (k, n) = 16n + k: a stage stores both as
 * [row][LDK], so a value e sits at e / 16 * LDK + e % 16 there. bf16 holds 0 .. 255 exactly (8 significant
 * bits). Then a vote per warp. */
static __device__ lce5_words lce5_learn(bf16 *scratch)
{
    int *votes = (int *)(scratch + FRAG * FRAG);
    for (int e = threadIdx.x; e < FRAG * FRAG; e += LCE5_THREADS) scratch[e] = bf16_from_f32((float)e);
    __syncthreads(); /* the tile is complete before any warp loads it */
    lce5_a fa;
    lce5_b fb;
    wmma::load_matrix_sync(fa, (const __nv_bfloat16 *)scratch, FRAG);
    wmma::load_matrix_sync(fb, (const __nv_bfloat16 *)scratch, FRAG);
    lce5_words w;
    int ok = 1;
    for (int q = 0; q < WORDS; q++) {
        int a0 = (int)__bfloat162float(fa.x[2 * q]), a1 = (int)__bfloat162float(fa.x[2 * q + 1]);
        int b0 = (int)__bfloat162float(fb.x[2 * q]), b1 = (int)__bfloat162float(fb.x[2 * q + 1]);
        ok = ok && a0 % 2 == 0 && a1 == a0 + 1 && b0 % 2 == 0 && b1 == b0 + 1;
        w.a[q] = a0 / FRAG * LDK + a0 % FRAG;
        w.b[q] = b0 / FRAG * LDK + b0 % FRAG;
    }
    ok = __all_sync(0xffffffffu, ok);
    if (threadIdx.x % LCE_WARP == 0) votes[threadIdx.x / LCE_WARP] = ok;
    __syncthreads(); /* every warp's vote is in */
    w.paired = 1;
    for (int v = 0; v < LCE5_WARPS; v++) w.paired = w.paired && votes[v];
    __syncthreads(); /* every thread has read the votes before the pipeline overwrites them */
    return w;
}

/* f's register q = the 32-bit word at p + off[q] (shared memory, 4-byte aligned: p and off[q] even) */
template <class F> static __device__ void lce5_load_words(F &f, const bf16 *p, const int (&off)[WORDS])
{
    for (int q = 0; q < WORDS; q++) {
        unsigned word = *(const unsigned *)(p + off[q]);
        memcpy((void *)&f.x[2 * q], &word, sizeof word); /* the register's two bf16 */
    }
}

/* dst [R][LDK] (shared) = the R x 64 block of m at (r0, c0), zero outside m. Consecutive threads take consecutive
 * 16-byte chunks of a row: cp.async where rows are 16-byte aligned, plain loads and stores otherwise. */
template <int R> static __device__ void lce5_stage(bf16 *dst, lce5_matrix m, long long r0, long long c0, bool vec)
{
    for (int e = threadIdx.x; e < R * (LCE4_TILE_K / 8); e += LCE5_THREADS) {
        int r = e / (LCE4_TILE_K / 8), c = e % (LCE4_TILE_K / 8) * 8;
        long long gr = r0 + r, gc = c0 + c;
        bool in = gr < m.rows && gc < m.cols;
        const bf16 *src = in ? m.p + gr * m.ld + gc : m.p;
        if (vec) {
            __pipeline_memcpy_async(dst + r * LDK + c, src, 16, in ? 0 : 16); /* gc + 8 <= cols: both % 8 == 0 */
        } else {
            bf16 t[8];
            for (int k = 0; k < 8; k++) t[k] = in && gc + k < m.cols ? src[k] : (bf16)0;
            uint4 v;
            memcpy(&v, t, sizeof v);
            *(uint4 *)(dst + r * LDK + c) = v;
        }
    }
}

/* a stage slot: A's [128][LDK], then B's [256][LDK] */
static __device__ bf16 *lce5_slot_a(unsigned char *smem, int slot)
{
    return (bf16 *)(smem + slot * (LCE5_STAGE_A_BYTES + LCE5_STAGE_B_BYTES));
}
static __device__ bf16 *lce5_slot_b(unsigned char *smem, int slot)
{
    return (bf16 *)(smem + slot * (LCE5_STAGE_A_BYTES + LCE5_STAGE_B_BYTES) + LCE5_STAGE_A_BYTES);
}

static __device__ void lce5_stage_step(unsigned char *smem, int slot, lce5_matrix A, lce5_matrix B, long long m0,
                                       long long n0, int k, bool vec)
{
    long long k0 = (long long)k * LCE4_TILE_K;
    lce5_stage<LCE5_TILE_M>(lce5_slot_a(smem, slot), A, m0, k0, vec);
    lce5_stage<LCE5_TILE_N>(lce5_slot_b(smem, slot), B, n0, k0, vec);
}

/* acc += the staged step in slot `slot`; warp w owns output rows [64 (w / 4), +64) and columns [64 (w % 4), +64):
 * each a fragment serves 4 b fragments and each b fragment 4 a fragments. Words: the learned loads. */
template <bool Words>
static __device__ void lce5_mma_step(unsigned char *smem, int slot, const lce5_words &w,
                                     lce5_acc (&acc)[FRAGS][FRAGS])
{
    int warp = threadIdx.x / LCE_WARP;
    const bf16 *a = lce5_slot_a(smem, slot) + warp / WARPS_N * LCE4_WARP_TILE * LDK;
    const bf16 *b = lce5_slot_b(smem, slot) + warp % WARPS_N * LCE4_WARP_TILE * LDK;
    for (int kk = 0; kk < LCE4_TILE_K; kk += FRAG) {
        lce5_a fa[FRAGS];
        for (int i = 0; i < FRAGS; i++) {
            const bf16 *p = a + FRAG * i * LDK + kk;
            if (Words)
                lce5_load_words(fa[i], p, w.a);
            else
                wmma::load_matrix_sync(fa[i], (const __nv_bfloat16 *)p, LDK);
        }
        for (int j = 0; j < FRAGS; j++) {
            lce5_b fb;
            const bf16 *p = b + FRAG * j * LDK + kk;
            if (Words)
                lce5_load_words(fb, p, w.b);
            else
                wmma::load_matrix_sync(fb, (const __nv_bfloat16 *)p, LDK);
            for (int i = 0; i < FRAGS; i++) wmma::mma_sync(acc[i][j], fa[i], fb, acc[i][j]);
        }
    }
}

/* The output tile (shared, [128][LDO] f32) = A[m0 .. m0 + 128, :] . B[n0 .. n0 + 256, :]^T over the K steps s
 * takes, through the LCE4_STAGES-deep pipeline: while step k is multiplied, steps k + 1 and k + 2 are in flight.
 * The tile reuses the stages' bytes; every thread may read any of it on return. */
template <bool Words>
static __device__ void lce5_gemm_tile(unsigned char *smem, const lce5_words &w, lce5_matrix A, lce5_matrix B,
                                      long long m0, long long n0, lce5_ksteps s)
{
    bool vec = lce5_vec(A) && lce5_vec(B);
    lce5_acc acc[FRAGS][FRAGS];
    for (int i = 0; i < FRAGS; i++)
        for (int j = 0; j < FRAGS; j++) wmma::fill_fragment(acc[i][j], 0.0f);
    lce5_window ahead = {-1, 0}, now = {-1, 0}; /* the fetches' flags, and the steps' (up to 2 steps behind) */
    int fetch = lce5_next_step(s, ahead, 0), slot = 0;
    for (int st = 0; st < LCE4_STAGES - 1; st++) {
        if (fetch < s.n) {
            lce5_stage_step(smem, st, A, B, m0, n0, fetch, vec);
            fetch = lce5_next_step(s, ahead, fetch + 1);
        }
        __pipeline_commit(); /* an empty group too: the wait below counts groups */
    }
    for (int k = 0; k < s.n; k++) {
        if (!lce5_active(s, now, k)) continue; /* uniform: every thread reads the same flag */
        __pipeline_wait_prior(LCE4_STAGES - 2);
        __syncthreads(); /* step k has landed for every thread, and every warp is done with the slot refilled next */
        if (fetch < s.n) {
            lce5_stage_step(smem, (slot + LCE4_STAGES - 1) % LCE4_STAGES, A, B, m0, n0, fetch, vec);
            fetch = lce5_next_step(s, ahead, fetch + 1);
        }
        __pipeline_commit();
        lce5_mma_step<Words>(smem, slot, w, acc);
        slot = (slot + 1) % LCE4_STAGES;
    }
    __pipeline_wait_prior(0);
    __syncthreads(); /* no copy in flight and every fragment read before the stages' bytes become the output tile */
    float *z = (float *)smem;
    int warp = threadIdx.x / LCE_WARP, wm = warp / WARPS_N * LCE4_WARP_TILE, wn = warp % WARPS_N * LCE4_WARP_TILE;
    for (int i = 0; i < FRAGS; i++)
        for (int j = 0; j < FRAGS; j++)
            wmma::store_matrix_sync(z + (wm + FRAG * i) * LDO + wn + FRAG * j, acc[i][j], LDO, wmma::mem_row_major);
    __syncthreads(); /* the whole tile is stored before the epilogue's passes read it */
}

/* the block's layout learned, then the tile through the loads it allows */
static __device__ void lce5_tile(unsigned char *smem, lce5_matrix A, lce5_matrix B, long long m0, long long n0,
                                 lce5_ksteps s)
{
    lce5_words w = lce5_learn((bf16 *)smem);
    if (w.paired)
        lce5_gemm_tile<true>(smem, w, A, B, m0, n0, s);
    else
        lce5_gemm_tile<false>(smem, w, A, B, m0, n0, s);
}

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 12.5% (z[target]: 4 bytes from the one lane
 * whose column holds it; the partials whole sectors), shared memory <= 4 wavefronts per request (16-byte stores
 * of a warp: 4 at best). Logits x W^T of one (row tile, [.., 256] vocabulary tile); each counted row's partial (max,
 * sum exp) over each 128-column half (v4's partials, so v4's merge reads them), and z[target] from the one tile
 * that holds it. */
__global__ void lce5_forward_kernel(int N, int V, int H, const bf16 *x /* (N, H) */, const bf16 *W /* (V, H) */,
                                    const int32_t *target /* (N,) */, float *part /* (2, ceil(V / 128), N) */,
                                    float *z_target /* (N,) */)
{
    DYNAMIC_SHARED(unsigned char, smem);
    long long tm, tv;
    lce4_block_tile(blockIdx.x, lce4_tiles(N), lce5_tiles_n(V), &tm, &tv);
    long long n0 = tm * LCE5_TILE_M, v0 = tv * LCE5_TILE_N;
    lce5_matrix A = {x, N, H, H}, B = {W, V, H, H};
    lce5_ksteps all = {NULL, 0, (H + LCE4_TILE_K - 1) / LCE4_TILE_K};
    lce5_tile(smem, A, B, n0, v0, all);
    const float *z = (const float *)smem;
    lce_lse_acc *rows = (lce_lse_acc *)(smem + LCE5_ROWS_AT); /* [2][128] the halves' partials, one store each */
    int warp = threadIdx.x / LCE_WARP, lane = threadIdx.x % LCE_WARP;
    for (int i = warp; i < LCE5_TILE_M; i += LCE5_WARPS) { /* a warp per row, lanes over interleaved columns */
        long long n = n0 + i;
        int t = n < N ? target[n] : LCE_IGNORE;
        if (t == LCE_IGNORE) continue; /* uniform across the warp */
        for (int h = 0; h < 2 && v0 + h * HALF < V; h++) {
            lce_lse_acc a = lce_lse_init();
            for (int q = h * HALF + lane; q < (h + 1) * HALF; q += LCE_WARP) {
                if (v0 + q >= V) break;
                float zv = z[i * LDO + q];
                a = lce_lse_add(a, zv);
                if (v0 + q == t) z_target[n] = zv;
            }
            a = lce_warp_lse(a); /* lane 0 always holds a column (the half starts below V): a NaN row stays NaN */
            if (lane == 0) rows[h * LCE5_TILE_M + i] = a;
        }
    }
    __syncthreads(); /* every row's partials are in before thread (h, i) stores half h of row i */
    int h = threadIdx.x / LCE5_TILE_M, i = threadIdx.x % LCE5_TILE_M;
    long long n = n0 + i, tiles_v = lce4_tiles(V), part_tile = 2 * tv + h;
    if (n < N && part_tile < tiles_v && target[n] != LCE_IGNORE) {
        part[part_tile * N + n] = rows[h * LCE5_TILE_M + i].m;
        part[(tiles_v + part_tile) * N + n] = rows[h * LCE5_TILE_M + i].s;
    }
}

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 80%, shared memory <= 2 wavefronts per
 * request. dst (cols, ldd) = src (rows, lds)^T through a [32][34] tile (17 words a row: a column's 32 elements
 * in 32 banks), with dst's columns [rows, rows_pad) zero: a block of 32 x 8 threads per 32 x 32 tile. */
__global__ void lce5_transpose_kernel(int rows, int cols, int rows_pad, const bf16 *src /* (rows, lds) */,
                                      long long lds, bf16 *dst /* (cols, ldd) */, long long ldd)
{
    __shared__ bf16 t[LCE5_TRANSPOSE_TILE][LCE5_TRANSPOSE_TILE + 2];
    long long tiles_c = (cols + LCE5_TRANSPOSE_TILE - 1) / LCE5_TRANSPOSE_TILE;
    long long r0 = blockIdx.x / tiles_c * LCE5_TRANSPOSE_TILE, c0 = blockIdx.x % tiles_c * LCE5_TRANSPOSE_TILE;
    int lane = threadIdx.x % LCE5_TRANSPOSE_TILE, y = threadIdx.x / LCE5_TRANSPOSE_TILE;
    for (int i = y; i < LCE5_TRANSPOSE_TILE; i += LCE5_TRANSPOSE_THREADS / LCE5_TRANSPOSE_TILE) {
        long long r = r0 + i, c = c0 + lane; /* lanes along src's row */
        t[i][lane] = r < rows && c < cols ? src[r * lds + c] : (bf16)0;
    }
    __syncthreads(); /* the tile is in before it is read across */
    for (int i = y; i < LCE5_TRANSPOSE_TILE; i += LCE5_TRANSPOSE_THREADS / LCE5_TRANSPOSE_TILE) {
        long long c = c0 + i, r = r0 + lane; /* lanes along dst's row */
        if (c < cols && r < rows_pad) dst[c * ldd + r] = t[lane][i];
    }
}

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 80%, shared memory <= 4 wavefronts per request
 * (the column pass reads the fp32 tile down a column: rows LDO = 260 words apart, 4 ways). Backward's logits, once
 * per [128, 256] tile of the chunk [c0, c0 + vc): G = bf16((softmax - onehot) * sc) into the chunk buffer (columns
 * past V, ignored rows: 0) and the same values into G^T (Gt), and each 128-column half's filter flag. */
__global__ void lce5_grad_kernel(int N, int V, int H, int c0, int vc, int ldg, int ldn, const bf16 *x /* (N, H) */,
                                 const bf16 *W /* (V, H) */, const int32_t *target /* (N,) */,
                                 const float *lse /* (N,) */, const float *scale /* (1,) */,
                                 const float *dloss /* (1,) */, int filter, bf16 *G /* (N, ldg) */,
                                 bf16 *Gt /* (ldg, ldn) */, int *skip /* (ceil(N / 128), ldg / 128) */,
                                 unsigned *skipped /* (1,) */)
{
    DYNAMIC_SHARED(unsigned char, smem);
    long long tm, tc;
    lce4_block_tile(blockIdx.x, lce4_tiles(N), lce5_tiles_n(vc), &tm, &tc);
    long long n0 = tm * LCE5_TILE_M, j0 = tc * LCE5_TILE_N, v0 = c0 + j0;
    lce5_matrix A = {x, N, H, H}, B = {W, V, H, H};
    lce5_ksteps all = {NULL, 0, (H + LCE4_TILE_K - 1) / LCE4_TILE_K};
    lce5_tile(smem, A, B, n0, v0, all);
    float *z = (float *)smem;
    int *votes = (int *)(smem + LCE5_ROWS_AT); /* [2][LCE5_WARPS] past the output tile */
    float sc = scale[0] * dloss[0];
    int warp = threadIdx.x / LCE_WARP, lane = threadIdx.x % LCE_WARP;
    bool busy[2] = {false, false}; /* a gradient entry of each half not negligible */
    for (int i = warp; i < LCE5_TILE_M; i += LCE5_WARPS) { /* rows: G's, and the tile's values become G's */
        long long n = n0 + i;
        if (n >= N) break; /* uniform across the warp */
        int t = target[n];
        float ln = t == LCE_IGNORE ? 0.0f : lse[n];
        for (int h = 0; h < 2; h++)
            for (int q = h * HALF + lane; q < (h + 1) * HALF; q += LCE_WARP) {
                float g = 0.0f;
                if (t != LCE_IGNORE && j0 + q < vc) {
                    float d = lce_softmax_minus_onehot(z[i * LDO + q], ln, v0 + q == t);
                    busy[h] = busy[h] || !lce_grad_negligible(d);
                    g = d * sc; /* lce_grad's arithmetic: the same product in the same order */
                }
                bf16 gb = bf16_from_f32(g);
                G[n * ldg + j0 + q] = gb;
                z[i * LDO + q] = bf16_to_f32(gb);
            }
    }
    for (int h = 0; h < 2; h++) {
        int any = __any_sync(0xffffffffu, busy[h]);
        if (lane == 0) votes[h * LCE5_WARPS + warp] = any;
    }
    __syncthreads(); /* every warp's votes and every G value are in before the flags and the column pass */
    for (int q = warp; q < LCE5_TILE_N; q += LCE5_WARPS) /* columns: G^T's rows, lanes along n */
        for (int i = lane; i < LCE5_TILE_M && n0 + i < N; i += LCE_WARP)
            Gt[(j0 + q) * ldn + n0 + i] = bf16_from_f32(z[i * LDO + q]);
    if (threadIdx.x < 2 && j0 + threadIdx.x * HALF < vc) { /* a half that holds columns of the chunk */
        int h = threadIdx.x, negligible = 1;
        for (int w = 0; w < LCE5_WARPS; w++) negligible = negligible && !votes[h * LCE5_WARPS + w];
        skip[tm * (ldg / HALF) + 2 * tc + h] = filter && negligible;
        if (filter && negligible) atomicAdd(skipped, 1u);
    }
}

/* Designed for: loads >= 80% of each 32-byte sector used, stores >= 80%, shared memory <= 4 wavefronts per request.
 * dx rows of one (row tile, [.., 256] H tile) += G . Wt^T over the chunk's vocabulary rows (Wt = the chunk's W^T,
 * zero past vc), filtered [128, 128] tiles skipped; the chunks' sums meet in dx_acc (f32) in chunk order and are
 * rounded to bf16 once, after the last. */
__global__ void lce5_dx_kernel(int N, int H, int vc, int ldg, const bf16 *G /* (N, ldg) */,
                               const int *skip /* (ceil(N / 128), ldg / 128) */, const bf16 *Wt /* (H, ldg) */,
                               int first, int last, float *dx_acc /* (N, H) */, bf16 *dx /* (N, H) */)
{
    DYNAMIC_SHARED(unsigned char, smem);
    long long tm, th;
    lce4_block_tile(blockIdx.x, lce4_tiles(N), lce5_tiles_n(H), &tm, &th);
    long long n0 = tm * LCE5_TILE_M, h0 = th * LCE5_TILE_N;
    lce5_matrix A = {G, N, ldg, ldg}, B = {Wt, H, ldg, ldg};
    lce5_ksteps ks = {skip + tm * (ldg / HALF), 1, (vc + LCE4_TILE_K - 1) / LCE4_TILE_K};
    lce5_tile(smem, A, B, n0, h0, ks);
    const float *z = (const float *)smem;
    int warp = threadIdx.x / LCE_WARP, lane = threadIdx.x % LCE_WARP;
    for (int i = warp; i < LCE5_TILE_M; i += LCE5_WARPS) {
        long long n = n0 + i;
        if (n >= N) break;
        for (int q = lane; q < LCE5_TILE_N && h0 + q < H; q += LCE_WARP) {
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
 * dW rows of one (chunk vocabulary tile of 128, [.., 256] H tile) = Gt . xt^T over all N rows (K = N) in
 * registers, filtered tiles skipped: each dW element written once, by one block, with no fp32 round trip. */
__global__ void lce5_dw_kernel(int N, int H, int vc, int ldg, int ldn, const bf16 *Gt /* (ldg, ldn) */,
                               const int *skip /* (ceil(N / 128), ldg / 128) */, const bf16 *xt /* (H, ldn) */,
                               float *dWc /* (vc, H) */)
{
    DYNAMIC_SHARED(unsigned char, smem);
    long long tv, th;
    lce4_block_tile(blockIdx.x, lce4_tiles(vc), lce5_tiles_n(H), &tv, &th);
    long long j0 = tv * LCE5_TILE_M, h0 = th * LCE5_TILE_N;
    lce5_matrix A = {Gt, vc, N, ldn}, B = {xt, H, N, ldn};
    lce5_ksteps ks = {skip + tv, ldg / HALF, (N + LCE4_TILE_K - 1) / LCE4_TILE_K};
    lce5_tile(smem, A, B, j0, h0, ks);
    const float *z = (const float *)smem;
    int warp = threadIdx.x / LCE_WARP, lane = threadIdx.x % LCE_WARP;
    for (int i = warp; i < LCE5_TILE_M; i += LCE5_WARPS) {
        long long j = j0 + i;
        if (j >= vc) break;
        for (int q = lane; q < LCE5_TILE_N && h0 + q < H; q += LCE_WARP) dWc[j * H + h0 + q] = z[i * LDO + q];
    }
}

/* the four GEMM-shaped kernels each take LCE5_SMEM_BYTES of dynamic shared memory: the version fits this GPU when
 * every one does (the small merge and transpose kernels fit any GPU from sm_80) */
extern "C" const char *lce5_device_unfit(void)
{
    const cuda_launch_need needs[] = {{(const void *)lce5_forward_kernel, LCE5_THREADS, LCE5_SMEM_BYTES, 80, 0},
                                      {(const void *)lce5_grad_kernel, LCE5_THREADS, LCE5_SMEM_BYTES, 80, 0},
                                      {(const void *)lce5_dx_kernel, LCE5_THREADS, LCE5_SMEM_BYTES, 80, 0},
                                      {(const void *)lce5_dw_kernel, LCE5_THREADS, LCE5_SMEM_BYTES, 80, 0}};
    return cuda_fit(needs, 4);
}

/* the GEMM kernels use more than 48 KiB of dynamic shared memory: opt in once per kernel */
static void lce5_opt_in(void)
{
    static int done;
    if (done) return;
    CUDA_CHECK(cudaFuncSetAttribute(lce5_forward_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, LCE5_SMEM_BYTES));
    CUDA_CHECK(cudaFuncSetAttribute(lce5_grad_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, LCE5_SMEM_BYTES));
    CUDA_CHECK(cudaFuncSetAttribute(lce5_dx_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, LCE5_SMEM_BYTES));
    CUDA_CHECK(cudaFuncSetAttribute(lce5_dw_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, LCE5_SMEM_BYTES));
    done = 1;
}

/* [128, 256] tiles over an m x n output */
static unsigned lce5_grid(long long m, long long n) { return (unsigned)(lce4_tiles(m) * lce5_tiles_n(n)); }

void lce5_launch_forward(int N, int V, int H, const bf16 *x, const bf16 *W, const int32_t *target, float *part,
                         float *z_target, float *lse, float *row_loss)
{
    lce5_opt_in();
    LAUNCH(lce5_forward_kernel, lce5_grid(N, V), LCE5_THREADS, LCE5_SMEM_BYTES)(N, V, H, x, W, target, part,
                                                                               z_target);
    CUDA_CHECK_LAST();
    lce4_launch_merge(N, V, target, part, z_target, lse, row_loss);
}

void lce5_launch_transpose(int rows, int cols, int rows_pad, const bf16 *src, long long lds, bf16 *dst,
                           long long ldd)
{
    long long t = LCE5_TRANSPOSE_TILE;
    unsigned blocks = (unsigned)(((rows_pad + t - 1) / t) * ((cols + t - 1) / t));
    LAUNCH(lce5_transpose_kernel, blocks, LCE5_TRANSPOSE_THREADS, 0)(rows, cols, rows_pad, src, lds, dst, ldd);
    CUDA_CHECK_LAST();
}

void lce5_launch_backward_chunk(int N, int V, int H, int c0, int vc, int ldg, int ldn, const bf16 *x,
                                const bf16 *xt, const bf16 *W, const int32_t *target, const float *lse,
                                const float *scale, const float *dloss, int filter, bf16 *G, bf16 *Gt, bf16 *Wt,
                                int *skip, unsigned *skipped, int first, int last, float *dx_acc, bf16 *dx,
                                float *dW)
{
    lce5_opt_in();
    const bf16 *Wc = W + (long long)c0 * H;
    lce5_launch_transpose(vc, H, ldg, Wc, H, Wt, ldg);
    LAUNCH(lce5_grad_kernel, lce5_grid(N, vc), LCE5_THREADS, LCE5_SMEM_BYTES)(
        N, V, H, c0, vc, ldg, ldn, x, W, target, lse, scale, dloss, filter, G, Gt, skip, skipped);
    CUDA_CHECK_LAST();
    LAUNCH(lce5_dx_kernel, lce5_grid(N, H), LCE5_THREADS, LCE5_SMEM_BYTES)(N, H, vc, ldg, G, skip, Wt, first, last,
                                                                          dx_acc, dx);
    CUDA_CHECK_LAST();
    LAUNCH(lce5_dw_kernel, lce5_grid(vc, H), LCE5_THREADS, LCE5_SMEM_BYTES)(N, H, vc, ldg, ldn, Gt, skip, xt,
                                                                           dW + (long long)c0 * H);
    CUDA_CHECK_LAST();
}
