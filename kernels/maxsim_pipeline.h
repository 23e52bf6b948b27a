/* maxsim_pipeline.h - lesson 3's pipelined forward (cuda-v4 .. cuda-v9): what the versions share. One block per
 * (i, m) keeps 128 rows of a[i] (all of K, rounded to TF32) in shared memory -- more than the default 48 KB, so
 * the launch opts in -- while b[m] streams past them through a cp.async pipeline: v4-v7 in tiles of 128 rows, 16
 * columns of K per stage, 3 stages (the copies of the next two in flight while the warps multiply the current
 * one); v8 and v9 in tiles of 256 rows, 32 columns per stage, 2 stages; one barrier per stage. The block's shape
 * is a template parameter (pipe_block): the warps tile the score tile in COLS columns of 64 (4 WMMA fragments
 * wide) and rows of 16 * WX (WX fragments high): WX = 4, COLS = 2 gives v4 and v5's 4 warps of 64 x 64; WX = 2 v6
 * and v7's 8 warps of 32 x 64; WX = 4, COLS = 4 v8's and v9's 8 warps of 64 x 64 on a 128 x 256 tile
 * (m16n16k8 TF32 fragments, float accumulators; b's fragments are rounded to TF32 after loading, a's rows when
 * staged: the rounding v3 applies). The scores never leave the registers: a fragment's element order is
 * unspecified, so in v4-v8 each lane learns where its elements sit by loading a tile of their own coordinates
 * once, then folds every score into a running (max, argmax) per element slot (v9 relies on PTX's order, checked
 * on the device first, and keeps one per row) -- the fold, the fragment loads and the walk through the stages
 * are the template's policies (pipe_forward) -- and at the end of a j tile the warps that share rows merge their
 * maxima through shared memory and one thread per row finishes it. Block order m outer, i inner
 * (blockIdx.x = m*I + i): b[m] stays in L2 while a[i] is read once per j tile. v4 .. v7 take K up to 256
 * (ms4_smem_bytes, 163,840 bytes at K = 256; beyond, cuda_ms4_unfit refuses and v3 runs any K); v8 and v9 too,
 * with MS8_SMEM_BYTES and MS9_SMEM_BYTES whatever K. Each version's unfit asks the device (cuda_fit) first.
 * CUDA sources only. */
#ifndef KERNELS_MAXSIM_PIPELINE_H
#define KERNELS_MAXSIM_PIPELINE_H

#include <cuda_pipeline_primitives.h>
#include <mma.h>

#include "maxsim_math.h"
#include "maxsim_problem.h"

#include "runtime/launch.h"

#include <math.h>

namespace wmma = nvcuda::wmma;

#define MERGE_X (8 * 32 + 1) /* the merge's slots of a row group: 8 per lane, + 1 (a scan's 2 groups in 2 banks) */
#define GROUPS (MS4_TJ / 16)  /* row groups of 16 in a score tile: the merge's [GROUPS][MERGE_X] slot arrays */

static_assert(MS4_TJ == 128, "the merge's scan has a thread per row");
static_assert(MS4_PAD % 8 == 4, "rows 4 words off a multiple of 8: fragment loads conflict-free");

typedef wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc_frag;

/* The block's shape: warps WX fragments (16 * WX rows) high and 4 fragments (64 columns) wide, COLS warp columns
 * (a score tile, and a stage, of 64 * COLS rows of b), as many warp rows as fill the tile's MS4_TJ rows; TK
 * columns of K per stage, STAGES buffers, each row of a stage TK + PAD floats; a[i]'s rows LDA floats apart in
 * shared memory, or (LDA = 0) K + MS4_PAD padded to whole stages, known at run time. Rows 4 words off a multiple of
 * 8 suit 4-byte fragment loads, rows 8 words off a multiple of 32 the 8-byte ones. v4-v7: the defaults; v8:
 * pipe_block<4, 4, 32, 2, MS8_LDA>; v9: pipe_block<4, 4, 32, 2, MS9_LDA, MS9_PAD>. */
template <int WX, int COLS = 2, int TK = MS4_TK, int STAGES = MS4_STAGES, int LDA = 0, int PAD = MS4_PAD>
struct pipe_block {
    static_assert(WX == 2 || WX == 4, "warp tiles of 32 x 64 or 64 x 64");
    static_assert(COLS == 2 || COLS == 4, "score tiles 128 or 256 columns wide");
    static_assert(TK % 16 == 0, "k steps of 8 (m16n16k8), whole 16-byte copies, a's padding to TK");
    static_assert(STAGES >= 2, "the loop waits for all but the newest STAGES - 2 groups of copies");
    static constexpr int rows = 16 * WX;                         /* a warp's rows of the score tile */
    static constexpr int tn = 64 * COLS;                         /* the score tile's columns: rows of b a stage */
    static constexpr int threads = 32 * COLS * (MS4_TJ / rows); /* 128 for <4>, 256 for <2> and <4, 4> */
    static constexpr int tk = TK, stages = STAGES, lda = LDA;
    static constexpr int ldb = TK + PAD;                         /* a stage's rows of b: 20, 36 or 40 floats */
    static constexpr int stage = tn * ldb;                       /* floats per stage */
    static_assert(ldb % 8 == 4 || ldb % 32 == 8, "fragment loads conflict-free: 4-byte ones, or 8-byte ones");
    static_assert((16 * ldb * 4) % 32 == 0 && (stage * 4) % 32 == 0, "every fragment pointer 32-byte aligned");
    static_assert(2 * GROUPS * MERGE_X + 8 * 32 + MS4_TJ <= STAGES * stage, "the merge fits the stages");
};
typedef pipe_block<4, 4, 32, 2, MS8_LDA> v8_block; /* 2 warp rows x 4 warp columns of 64 x 64, 2 stages of 32 */
static_assert(pipe_block<4>::threads == MS4_THREADS && pipe_block<4>::tn == MS4_TN, "v4 and v5: MS4_THREADS, MS4_TN");
static_assert(v8_block::tn == MS8_TN && v8_block::tk == MS8_TK && v8_block::stages == MS8_STAGES, "MS8_SMEM_BYTES");

/* Lane's element slot q of an accumulator fragment sits at element p = pipe_pos(pos, q) of its 16 x 16 tile (row
 * p / 16, column p % 16): loaded once from a tile holding each element's own index (exact in float), kept as
 * 8-bit fields, four per word (registers are what the 64 x 64 warp tile runs short of). scratch: 256 floats,
 * 32-byte aligned. */
__device__ static int pipe_pos(const unsigned (&pos)[2], int q)
{
    return (int)((q < 4 ? pos[0] : pos[1]) >> (8 * (q % 4)) & 255u); /* no indexing by q: pos stays in registers */
}

template <int THREADS> __device__ static void pipe_fragment_positions(float *scratch, unsigned (&pos)[2])
{
    for (int e = threadIdx.x; e < 256; e += THREADS) scratch[e] = (float)e;
    __syncthreads(); /* the tile is complete before any warp loads it */
    acc_frag f;
    wmma::load_matrix_sync(f, scratch, 16, wmma::mem_row_major);
    pos[0] = pos[1] = 0;
    UNROLL for (int q = 0; q < f.num_elements; q++) pos[q / 4] |= (unsigned)f.x[q] << (8 * (q % 4));
    __syncthreads(); /* every warp has loaded it before the pipeline overwrites the scratch */
}

/* sA [MS4_TJ][lda] = a[i] rows j0 .. j0+128, columns 0 .. KP, rounded to TF32; zeros past J and K.
 * ai is a[i] (J, K). Plain loads: a tile is read once per j tile, beside 16 tiles of b per stage of it. */
template <int THREADS>
__device__ static void pipe_load_a(const float *ai, int J, int K, int KP, int lda, int j0, float *sA)
{
    if (K % 4 == 0) {
        for (int e = threadIdx.x; e < MS4_TJ * (KP / 4); e += THREADS) {
            int r = e / (KP / 4), k = e % (KP / 4) * 4, j = j0 + r;
            float4 v = {0.0f, 0.0f, 0.0f, 0.0f};
            if (j < J && k < K) v = *(const float4 *)(ai + (long long)j * K + k);
            float4 t = {wmma::__float_to_tf32(v.x), wmma::__float_to_tf32(v.y), wmma::__float_to_tf32(v.z),
                        wmma::__float_to_tf32(v.w)};
            *(float4 *)(sA + r * lda + k) = t;
        }
    } else {
        for (int e = threadIdx.x; e < MS4_TJ * KP; e += THREADS) {
            int r = e / KP, k = e % KP, j = j0 + r;
            sA[r * lda + k] = wmma::__float_to_tf32(j < J && k < K ? ai[(long long)j * K + k] : 0.0f);
        }
    }
}

/* Starts the copy of b[m] rows n0 .. n0+TN, columns k0 .. k0+TK into stage s [TN][LDB]; zeros past N and K
 * are stored directly. bm is b[m] (N, K). 16-byte copies when K % 4 == 0 (each row segment 16-byte aligned),
 * else 4-byte ones. */
template <int THREADS, int TN, int TK = MS4_TK, int LDB = TK + MS4_PAD>
__device__ static void pipe_issue(const float *bm, int N, int K, int n0, int k0, float *s)
{
    if (K % 4 == 0) {
        for (int e = threadIdx.x; e < TN * TK / 4; e += THREADS) {
            int r = e / (TK / 4), kk = e % (TK / 4) * 4, n = n0 + r, k = k0 + kk;
            float *d = s + r * LDB + kk;
            if (n < N && k < K) __pipeline_memcpy_async(d, bm + (long long)n * K + k, 16);
            else *(float4 *)d = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
    } else {
        for (int e = threadIdx.x; e < TN * TK; e += THREADS) {
            int r = e / TK, kk = e % TK, n = n0 + r, k = k0 + kk;
            float *d = s + r * LDB + kk;
            if (n < N && k < K) __pipeline_memcpy_async(d, bm + (long long)n * K + k, 4);
            else *d = 0.0f;
        }
    }
}

/* How the loop walks a j tile's stages (stage t: n tile t / kc, columns t % kc * B::tk ..): the kernel's third
 * policy (pipe_forward's Walk), for block shape B. The copies run B::stages - 1 stages ahead of the multiplies.
 *   start(bm, N, K, stages)           before a j tile's first stage (stages: the first buffer)
 *   issue(bm, N, K, kc, p, s)         starts the copies of stage p (0, 1, 2, ... in turn) into s, buffer
 *                                     p % B::stages
 *   k0(t, kc), buffer(t)              the multiplies' stage t: its first column, its buffer
 *   tile_end(t, kc), n0(t, kc)        whether t is its n tile's last stage; the tile's first row of b
 *   next(kc)                          after stage t
 * strided_walk, v4-v7's: pipe_issue, every value computed from the stage's number. */
template <class B> struct strided_walk {
    __device__ void start(const float *, int, int, float *) {}
    __device__ void issue(const float *bm, int N, int K, int kc, int p, float *s) const
    {
        pipe_issue<B::threads, B::tn, B::tk, B::ldb>(bm, N, K, p / kc * B::tn, p % kc * B::tk, s);
    }
    __device__ int k0(int t, int kc) const { return t % kc * B::tk; }
    __device__ int buffer(int t) const { return t % B::stages; }
    __device__ bool tile_end(int t, int kc) const { return t % kc == kc - 1; }
    __device__ int n0(int t, int kc) const { return t / kc * B::tn; }
    __device__ void next(int) {}
};

typedef wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a_frag;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> b_frag; /* s[n][k] */

/* How a stage's fragments are loaded: the kernel's other policy (pipe_forward's Loads), for block shape B.
 *   learn<B>(scratch, lda)             once per block, before the pipeline (scratch: 256 floats, 32-byte aligned)
 *   stage<B>(sA, lda, k0, s, wr, wc, c)   c[x][y] += sA rows wr+16x .. +16, columns k0 .. k0+B::tk, times the
 *                                      stage's rows wc+16y .. +16 (transposed)
 * wmma_loads, v4-v6's: load_matrix_sync for every fragment. nvcc's code for it addresses shared memory through
 * generic pointers, a 64-bit address computation beside each element's load. */
struct wmma_loads {
    template <class B> __device__ void learn(float *, int) {}
    template <class B>
    __device__ void stage(const float *sA, int lda, int k0, const float *s, int wr, int wc,
                          acc_frag (&c)[B::rows / 16][4]) const
    {
        constexpr int WX = B::rows / 16, LDB = B::ldb;
        a_frag fa;
        b_frag fb[4];
        UNROLL for (int kk = 0; kk < B::tk; kk += 8) {
            UNROLL for (int y = 0; y < 4; y++) {
                wmma::load_matrix_sync(fb[y], s + (wc + 16 * y) * LDB + kk, LDB);
                UNROLL for (int q = 0; q < fb[y].num_elements; q++) fb[y].x[q] = wmma::__float_to_tf32(fb[y].x[q]);
            }
            UNROLL for (int x = 0; x < WX; x++) {
                wmma::load_matrix_sync(fa, sA + (wr + 16 * x) * lda + k0 + kk, lda);
                UNROLL for (int y = 0; y < 4; y++) wmma::mma_sync(c[x][y], fa, fb[y], c[x][y]);
            }
        }
    }
};

/* The row maxima of one j tile from the warps' slots. The slots go to shared memory by (row group g of the tile,
 * slot q, lane) -- consecutive lanes, consecutive words, whatever the fragment layout -- in mv/mn [GROUPS][MERGE_X]:
 * the right-most warp of each warp row writes its own, then each warp to its left in turn (same lanes, same
 * layout: the same rows and columns) merges them into its own and writes the result. Then thread r < 128 takes
 * row r: of its row group's 256 slots, those whose element lies in its row (the lanes' positions, in where), into
 * rowmax[r] and, when kept, arg[i, j0 + r, m]. */
template <int WX, int COLS>
__device__ static void pipe_merge(float (&best)[WX][8], int (&bn)[WX][8], const unsigned (&pos)[2], int wr, int wc,
                                  float *mv, int *mn, float *rowmax, int *argrow, int J, int j0, int M)
{
    int lane = threadIdx.x % 32, first = wr / 16 * MERGE_X; /* the warp's first row group */
    int *where = mn + GROUPS * MERGE_X; /* [8][32]: lane l's slot q holds element where[q * 32 + l] of its tile */
    if (threadIdx.x < 32)
        UNROLL for (int q = 0; q < 8; q++) where[q * 32 + lane] = pipe_pos(pos, q);
    UNROLL for (int side = COLS - 1; side >= 0; side--) {
        if (wc / 64 == side)
            UNROLL for (int x = 0; x < WX; x++)
                UNROLL for (int q = 0; q < 8; q++) {
                    int slot = first + x * MERGE_X + q * 32 + lane;
                    if (side < COLS - 1) {
                        float cv = mv[slot];
                        int cn = mn[slot];
                        if (ms_better_f(cv, cn, best[x][q], bn[x][q])) best[x][q] = cv, bn[x][q] = cn;
                    }
                    mv[slot] = best[x][q], mn[slot] = bn[x][q];
                }
        __syncthreads(); /* each side's slots are written before the next reads them; side 0's before the scan */
    }
    int r = threadIdx.x, rows = r / 16 * MERGE_X; /* row r's row group */
    if (r >= MS4_TJ) return; /* a thread per row */
    float v = -INFINITY;
    int n = 0; /* a real column: see ms_better */
    for (int q = 0; q < 8; q++)
        for (int l = 0; l < 32; l++) {
            int pl = where[q * 32 + l]; /* the same word for the whole warp: a broadcast */
            float cv = mv[rows + q * 32 + l]; /* every lane reads (two words per warp), then keeps its row's */
            int cn = mn[rows + q * 32 + l];
            if (pl / 16 == r % 16 && ms_better_f(cv, cn, v, n)) v = cv, n = cn;
        }
    rowmax[r] = v;
    if (argrow && j0 + r < J) argrow[(long long)(j0 + r) * M] = n;
}

/* Parts of the body a policy may do itself (v9's, which rely on PTX's fragment layout), each specialised beside
 * its policy: loads_stage_a, the Loads that stages a[i]'s rows (load_a<B>, pipe_load_a's arguments) where
 * pipe_load_a would; fold_merges, the Fold that merges its own maxima (merge<COLS>, pipe_merge's arguments but the
 * slots and positions) where pipe_merge would. */
template <class Loads> struct loads_stage_a { static constexpr bool value = false; };
template <class Fold> struct fold_merges { static constexpr bool value = false; };

/* The kernel's body for warp tiles WX fragments high, COLS warp columns (pipe_block), Loads how a stage's
 * fragments are loaded (above), Fold the policy that keeps each slot's (max, argmax) between n tiles:
 *   float best[WX][8]; int n[WX][8];      per (row group x, slot q): the best score and what locates its column
 *   init(wc)                              before a j tile's first n tile (wc: the warp's first column in a tile)
 *   fold(c, pos, n0, N)                   the warp's finished scores of one n tile (n0: their first column), then
 *                                         clears c for the next
 *   columns(pos)                          n becomes each slot's argmax column, before the merge
 * (v9's row_fold keeps one per row instead and merges them itself: fold_merges), and Walk how the loop walks the
 * stages (above), on a block of shape B (pipe_block, WX fragments high). Launched with B::threads threads and
 * ms4_smem_bytes(K) (v4-v7), MS8_SMEM_BYTES (v8) or MS9_SMEM_BYTES (v9) bytes of dynamic shared memory. */
template <int WX, class Fold, class Loads = wmma_loads, class B = pipe_block<WX>, class Walk = strided_walk<B>>
__device__ static void pipe_forward(int I, int J, int M, int N, int K, const float *a, const float *b, float *out,
                                    int *arg)
{
    static_assert(B::rows == 16 * WX, "the fold's and the block's warp tiles");
    constexpr int T = B::threads, TN = B::tn, STAGE = B::stage, COLS = TN / 64;
    DYNAMIC_SHARED(float, smem);
    int KP = (int)((K + (long long)B::tk - 1) / B::tk * B::tk), lda = B::lda ? B::lda : KP + MS4_PAD, kc = KP / B::tk;
    float *sA = smem;                    /* [MS4_TJ][lda]: a[i]'s resident rows */
    float *stages = sA + MS4_TJ * lda;   /* [B::stages][TN][B::ldb]: b's pipeline */
    float *mv = stages;                  /* [GROUPS][MERGE_X] after the pipeline drains: the merge's maxima */
    int *mn = (int *)(mv + GROUPS * MERGE_X); /* [GROUPS][MERGE_X]: their columns */
    float *rowmax = (float *)(mn + GROUPS * MERGE_X + 8 * 32); /* [MS4_TJ], after the merge's positions */
    int m = blockIdx.x / I, i = blockIdx.x % I;                                  /* i inner: b[m] stays in L2 */
    const float *ai = a + (long long)i * J * K, *bm = b + (long long)m * N * K; /* a[i] (J, K), b[m] (N, K) */
    int *argrow = arg ? arg + (long long)i * J * M + m : 0;                       /* arg[i, :, m], stride M */
    int w = threadIdx.x / 32, wr = w / COLS * B::rows, wc = w % COLS * 64;
    unsigned pos[2];
    pipe_fragment_positions<T>(stages, pos);
    Loads loads;
    loads.template learn<B>(stages, lda);
    int tiles = (N + TN - 1) / TN, steps = tiles * kc; /* the pipeline's stages per j tile */
    float sum = 0.0f;
    Walk walk;
    for (int j0 = 0; j0 < J; j0 += MS4_TJ) {
        if constexpr (loads_stage_a<Loads>::value)
            loads.template load_a<B>(ai, J, K, KP, lda, j0, sA);
        else
            pipe_load_a<T>(ai, J, K, KP, lda, j0, sA);
        walk.start(bm, N, K, stages);
        for (int p = 0; p < B::stages - 1; p++) {
            if (p < steps) walk.issue(bm, N, K, kc, p, stages + p * STAGE);
            __pipeline_commit();
        }
        acc_frag c[WX][4];
        UNROLL for (int x = 0; x < WX; x++)
            UNROLL for (int y = 0; y < 4; y++) wmma::fill_fragment(c[x][y], 0.0f);
        Fold f;
        f.init(wc);
        for (int t = 0; t < steps; t++) {
            __pipeline_wait_prior(B::stages - 2); /* this thread's copies of stage t have landed */
            __syncthreads(); /* everyone's have, and every warp is done with stage t - 1, which the next copy reuses */
            int p = t + B::stages - 1;
            if (p < steps) walk.issue(bm, N, K, kc, p, stages + p % B::stages * STAGE);
            __pipeline_commit();
            loads.template stage<B>(sA, lda, walk.k0(t, kc), stages + walk.buffer(t) * STAGE, wr, wc, c);
            if (walk.tile_end(t, kc)) f.fold(c, pos, walk.n0(t, kc) + wc, N);
            walk.next(kc);
        }
        __pipeline_wait_prior(0);
        __syncthreads(); /* every warp is done with the stages before the merge reuses them */
        f.columns(pos);
        if constexpr (fold_merges<Fold>::value)
            f.template merge<COLS>(wr, wc, mv, mn, rowmax, argrow, J, j0, M);
        else
            pipe_merge<WX, COLS>(f.best, f.n, pos, wr, wc, mv, mn, rowmax, argrow, J, j0, M);
        __syncthreads(); /* rowmax is complete */
        if (threadIdx.x == 0)
            for (int jj = 0; jj < MS4_TJ && j0 + jj < J; jj++) sum += rowmax[jj]; /* j ascending, as the CPU */
        __syncthreads(); /* thread 0 has read rowmax and every thread sA before the next j tile rewrites them */
    }
    if (threadIdx.x == 0 && out) out[(long long)i * M + m] = sum;
}

#endif
