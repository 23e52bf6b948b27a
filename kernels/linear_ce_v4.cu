/* linear_ce_v4.cu - lesson 5, cuda-v4: Cut Cross-Entropy on mma.sync, [128, 256] tiles read in place. Changed
 * from v3: mma.sync bf16 (fp32 sums) on [128, 256] tiles of 8 warps, fed by ldmatrix (.trans where K runs
 * down the rows: no transposed copy) from a 3-stage cp.async pipeline; forward's partials, G and the filter's
 * vote computed on the accumulator registers; backward per vocabulary chunk writes G once, then dx += G W and
 * dW = G^T x walk compacted lists of the tiles the filter keeps, one writer per output element. */
#include "linear_ce.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_fit.h"
#include "runtime/cuda_track.h"
#include "runtime/launch.h"

#include <mma_ptx.h>
#include <string.h>

#define BM LCE4_TILE_M   /* output rows of a block */
#define BN LCE4_TILE_N   /* output columns of a block */
#define BK 32            /* K per pipeline stage: two k-steps of 16 */
#define STAGES 3
#define WARPS 8          /* 2 x 4 warps of [64, 64] */
#define THREADS (WARPS * LCE_WARP)
#define WM 64
#define WN 64
#define MI (WM / 16)     /* m16 tiles of a warp */
#define NJ (WN / 8)      /* n8 tiles of a warp */
#define FLAG LCE4_TILE_M /* the filter's tile along K: 4 stages */
#define PAD 8            /* 16 bytes a row: the 8 rows one ldmatrix phase reads fall in 8 bank groups */
#define LDK (BK + PAD)   /* an operand staged [rows][LDK], K along the row */
#define LDA_T (BM + PAD) /* A staged [BK][LDA_T], K down the rows (dW's G^T) */
#define LDB_T (BN + PAD) /* B staged [BK][LDB_T], K down the rows (dx's W, dW's x) */
#define MAX2(a, b) ((a) > (b) ? (a) : (b))
#define A_BYTES (MAX2(BM * LDK, BK * LDA_T) * 2)
#define B_BYTES (MAX2(BN * LDK, BK * LDB_T) * 2)
#define STAGE_BYTES (A_BYTES + B_BYTES)
#define SMEM_BYTES (STAGES * STAGE_BYTES) /* 92,160: within the 99 KB of every GPU from sm_80 */

static_assert(WARPS * WM * WN == BM * BN && BM == 2 * WM, "2 x 4 warps of [64, 64]");
static_assert(FLAG % BK == 0 && BN == 2 * FLAG, "a filter tile is whole stages, a block's columns two tiles");
static_assert((LDK * 2) % 16 == 0 && (LDA_T * 2) % 16 == 0 && (LDB_T * 2) % 16 == 0 && A_BYTES % 16 == 0,
              "ldmatrix and cp.async rows start on 16 bytes");
static_assert(SMEM_BYTES <= 99 * 1024, "fits 99 KB of shared memory per block");
static_assert(4 * BM * (int)sizeof(lce_lse_acc) <= SMEM_BYTES, "forward's row partials fit the stages");

/* A bf16 matrix in global memory: rows x cols, row stride ld (elements) */
struct lce4_matrix {
    const bf16 *p;
    long long rows, cols, ld;
};

/* 16-byte copies need every row and the base 16-byte aligned */
static __device__ bool lce4_vec(lce4_matrix m)
{
    return m.ld % 8 == 0 && m.cols % 8 == 0 && ((unsigned long long)m.p & 15) == 0;
}

/* The stages a GEMM takes: steps of BK; with tiles, step s is BK columns (s % 4) of K tile tiles[s / 4] (the
 * filter's kept tiles, compacted before the launch), else K [BK s, BK s + BK). */
struct lce4_ksteps {
    const int *tiles;
    int steps;
};

static __device__ long long lce4_k0(lce4_ksteps s, int step)
{
    const int per = FLAG / BK;
    return s.tiles ? (long long)s.tiles[step / per] * FLAG + step % per * BK : (long long)step * BK;
}

/* dst [R][ldd] (shared) = the R x C block of m at (r0, c0), zero outside m, in 16-byte chunks: cp.async where
 * rows are 16-byte aligned, plain loads and stores otherwise. A phase of 8 threads stores 128 bytes without a
 * bank conflict: 8 consecutive chunks of a row where a row has 8 or more, else one chunk of 8 consecutive
 * rows (as ldmatrix reads them: 8 bank groups); either way a warp reads whole 32-byte sectors. */
template <int R, int C>
static __device__ void lce4_stage(bf16 *dst, int ldd, lce4_matrix m, long long r0, long long c0, bool vec)
{
    const int chunks = C / 8, down = chunks < 8 ? 8 : 1; /* rows a phase spans */
    static_assert(C % 8 == 0 && R % 8 == 0, "whole chunks, whole groups of 8 rows");
    for (int e = threadIdx.x; e < R * chunks; e += THREADS) {
        int q = e / (down * chunks), p = e % (down * chunks);
        int r = q * down + p % down, c = p / down * 8;
        long long gr = r0 + r, gc = c0 + c;
        bool in = gr < m.rows && gc < m.cols;
        if (vec && in) {
            cp_async_16(dst + r * ldd + c, m.p + gr * m.ld + gc); /* gc + 8 <= cols: both % 8 == 0 */
        } else {
            bf16 t[8];
            UNROLL
            for (int k = 0; k < 8; k++) t[k] = in && gc + k < m.cols ? m.p[gr * m.ld + gc + k] : (bf16)0;
            uint4 v;
            memcpy(&v, t, sizeof v);
            *(uint4 *)(dst + r * ldd + c) = v;
        }
    }
}

/* Stage `slot` = K [k0, k0 + BK) of A (M x K; AT: given K x M) at rows m0 and of B (N x K, the way W is; BT:
 * given K x N) at columns n0. Each is staged as it lies in global memory: K along the rows, or down them. */
template <bool AT, bool BT>
static __device__ void lce4_stage_step(unsigned char *smem, int slot, lce4_matrix A, lce4_matrix B,
                                       long long m0, long long n0, long long k0, bool vec)
{
    bf16 *a = (bf16 *)(smem + slot * STAGE_BYTES), *b = (bf16 *)(smem + slot * STAGE_BYTES + A_BYTES);
    if (AT)
        lce4_stage<BK, BM>(a, LDA_T, A, k0, m0, vec);
    else
        lce4_stage<BM, BK>(a, LDK, A, m0, k0, vec);
    if (BT)
        lce4_stage<BK, BN>(b, LDB_T, B, k0, n0, vec);
    else
        lce4_stage<BN, BK>(b, LDK, B, n0, k0, vec);
}

/* acc += the stage in `slot`. Warp w owns rows [64 (w / 4), +64) and columns [64 (w % 4), +64): 4 x 8 mma
 * tiles of m16n8. ldmatrix.x4: lane 8q + r gives row r of 8 x 8 matrix q (mma_ptx.h); A's four are its m16k16
 * tile's quarters, B's two n8 tiles' k halves. Where K runs down the staged rows, .trans gives the same
 * registers. */
template <bool AT, bool BT>
static __device__ void lce4_mma_stage(const unsigned char *smem, int slot, float (&acc)[MI][NJ][4])
{
    const bf16 *a = (const bf16 *)(smem + slot * STAGE_BYTES);
    const bf16 *b = (const bf16 *)(smem + slot * STAGE_BYTES + A_BYTES);
    int warp = threadIdx.x / LCE_WARP, lane = threadIdx.x % LCE_WARP, q = lane / 8, r = lane % 8;
    int wm = warp / 4 * WM, wn = warp % 4 * WN;
    UNROLL
    for (int kk = 0; kk < BK; kk += 16) {
        uint32_t fa[MI][4], fb[NJ][2];
        UNROLL
        for (int i = 0; i < MI; i++) {
            if (AT) /* matrix q: k rows 8 (q / 2) + r, m columns 8 (q % 2) */
                ldmatrix_x4_trans(fa[i][0], fa[i][1], fa[i][2], fa[i][3],
                                  a + (kk + q / 2 * 8 + r) * LDA_T + wm + 16 * i + q % 2 * 8);
            else /* matrix q: m rows 8 (q % 2) + r, k columns 8 (q / 2) */
                ldmatrix_x4(fa[i][0], fa[i][1], fa[i][2], fa[i][3],
                            a + (wm + 16 * i + q % 2 * 8 + r) * LDK + kk + q / 2 * 8);
        }
        UNROLL
        for (int j = 0; j < NJ; j += 2) {
            if (BT) /* matrix q: k rows 8 (q % 2) + r, n columns 8 (q / 2) */
                ldmatrix_x4_trans(fb[j][0], fb[j][1], fb[j + 1][0], fb[j + 1][1],
                                  b + (kk + q % 2 * 8 + r) * LDB_T + wn + 8 * j + q / 2 * 8);
            else /* matrix q: n rows 8 (q / 2) + r, k columns 8 (q % 2) */
                ldmatrix_x4(fb[j][0], fb[j][1], fb[j + 1][0], fb[j + 1][1],
                            b + (wn + 8 * j + q / 2 * 8 + r) * LDK + kk + q % 2 * 8);
        }
        UNROLL
        for (int i = 0; i < MI; i++)
            UNROLL
            for (int j = 0; j < NJ; j++) mma_bf16_m16n8k16(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
}

/* acc = A[m0 .. m0 + 128, K] . B[K, n0 .. n0 + 256] over the stages s takes, through the STAGES-deep
 * pipeline: while stage k multiplies, k + 1 and k + 2 are in flight. Register acc[i][j][e] of lane 4g + t is
 * output (row 16 i + g + 8 (e / 2), column 8 j + 2 t + e % 2) of the warp's [64, 64]. On return the stages'
 * bytes are free (every copy landed, every warp past its last ldmatrix). */
template <bool AT, bool BT>
static __device__ void lce4_gemm(unsigned char *smem, lce4_matrix A, lce4_matrix B, long long m0,
                                 long long n0, lce4_ksteps s, float (&acc)[MI][NJ][4])
{
    bool vec = lce4_vec(A) && lce4_vec(B);
    UNROLL
    for (int i = 0; i < MI; i++)
        UNROLL
        for (int j = 0; j < NJ; j++)
            UNROLL
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;
    for (int st = 0; st < STAGES - 1; st++) {
        if (st < s.steps) lce4_stage_step<AT, BT>(smem, st, A, B, m0, n0, lce4_k0(s, st), vec);
        cp_async_commit(); /* an empty group too: the wait below counts groups */
    }
    for (int k = 0; k < s.steps; k++) {
        cp_async_wait<STAGES - 2>();
        __syncthreads(); /* stage k landed for every thread; every warp is done with the slot refilled next */
        int f = k + STAGES - 1;
        if (f < s.steps) lce4_stage_step<AT, BT>(smem, f % STAGES, A, B, m0, n0, lce4_k0(s, f), vec);
        cp_async_commit();
        lce4_mma_stage<AT, BT>(smem, k % STAGES, acc);
    }
    cp_async_wait<0>();
    __syncthreads();
}

__global__ void lce4_forward_kernel(int N, int V, int H, const bf16 *x /* (N, H) */,
                                    const bf16 *W /* (V, H) */, const int32_t *target /* (N,) */,
                                    float *part /* (2, ceil(V / 128), N) */, float *z_target /* (N,) */)
{
    DYNAMIC_SHARED(unsigned char, smem);
    long long tm, tv;
    lce4_block_tile(blockIdx.x, lce4_tiles(N), lce4_tiles_n(V), &tm, &tv);
    long long n0 = tm * BM, v0 = tv * BN;
    lce4_matrix A = {x, N, H, H}, B = {W, V, H, H};
    lce4_ksteps all = {NULL, (H + BK - 1) / BK};
    float acc[MI][NJ][4];
    lce4_gemm<false, false>(smem, A, B, n0, v0, all, acc);
    lce_lse_acc *rows = (lce_lse_acc *)smem; /* [4 column warps][128 rows] */
    int warp = threadIdx.x / LCE_WARP, lane = threadIdx.x % LCE_WARP, g = lane / 4, t = lane % 4;
    int wm = warp / 4 * WM, wn = warp % 4 * WN;
    UNROLL
    for (int i = 0; i < MI; i++)
        UNROLL
        for (int h = 0; h < 2; h++) {
            int r = wm + 16 * i + g + 8 * h;
            long long n = n0 + r;
            int tg = n < N ? target[n] : LCE_IGNORE;
            lce_lse_acc a = lce_lse_init(); /* the lane's 16 columns: their max first, then one exp each */
            UNROLL
            for (int j = 0; j < NJ; j++)
                UNROLL
                for (int e = 0; e < 2; e++) {
                    long long v = v0 + wn + 8 * j + 2 * t + e;
                    if (v >= V) continue;
                    a.m = fmaxf(a.m, acc[i][j][2 * h + e]);
                    if (v == tg) z_target[n] = acc[i][j][2 * h + e];
                }
            UNROLL
            for (int j = 0; j < NJ; j++)
                UNROLL
                for (int e = 0; e < 2; e++)
                    if (v0 + wn + 8 * j + 2 * t + e < V) a.s += expf(acc[i][j][2 * h + e] - a.m);
            UNROLL
            for (int off = 1; off < 4; off *= 2) { /* the quad holds the row's 64 columns of this warp */
                lce_lse_acc o;
                o.m = __shfl_xor_sync(0xffffffffu, a.m, off);
                o.s = __shfl_xor_sync(0xffffffffu, a.s, off);
                a = lce_lse_merge_keep_nan(a, o);
            }
            if (t == 0) rows[warp % 4 * BM + r] = a;
        }
    __syncthreads(); /* every warp's row partials are in before thread (half, row) merges its two */
    int hf = threadIdx.x / BM, r = threadIdx.x % BM;
    long long n = n0 + r, tiles_v = lce4_tiles(V), pt = 2 * tv + hf;
    if (n < N && pt < tiles_v && target[n] != LCE_IGNORE) {
        lce_lse_acc a = lce_lse_merge_keep_nan(rows[2 * hf * BM + r], rows[(2 * hf + 1) * BM + r]);
        part[pt * N + n] = a.m;
        part[(tiles_v + pt) * N + n] = a.s;
    }
}

__global__ void lce4_merge_kernel(int N, int V, const int32_t *target /* (N,) */,
                                  const float *part /* (2, ceil(V / 128), N) */,
                                  const float *z_target /* (N,) */,
                                  float *lse /* (N,) */, float *row_loss /* (N,) */)
{
    long long n = (long long)blockIdx.x * THREADS + threadIdx.x, tiles_v = lce4_tiles(V);
    if (n >= N) return;
    float l = 0.0f, loss = 0.0f; /* an ignored row's */
    if (target[n] != LCE_IGNORE) {
        lce_lse_acc a = {part[n], part[tiles_v * N + n]};
        for (long long j = 1; j < tiles_v; j++) {
            lce_lse_acc b = {part[j * N + n], part[(tiles_v + j) * N + n]};
            a = lce_lse_merge_keep_nan(a, b);
        }
        l = lce_lse_finish(a);
        loss = lce_row_loss(l, z_target[n]);
    }
    lse[n] = l;
    row_loss[n] = loss;
}

__global__ void lce4_grad_kernel(int N, int V, int H, int c0, int vc, int ldg, const bf16 *x /* (N, H) */,
                                 const bf16 *W /* (V, H) */, const int32_t *target /* (N,) */,
                                 const float *lse /* (N,) */, const float *scale /* (1,) */,
                                 const float *dloss /* (1,) */, int filter, bf16 *G /* (N, ldg) */,
                                 int *skip /* (ceil(N / 128), ldg / 128) */, unsigned *skipped /* (1,) */)
{
    DYNAMIC_SHARED(unsigned char, smem);
    long long tm, tc;
    lce4_block_tile(blockIdx.x, lce4_tiles(N), lce4_tiles_n(vc), &tm, &tc);
    long long n0 = tm * BM, j0 = tc * BN, v0 = c0 + j0;
    lce4_matrix A = {x, N, H, H}, B = {W, V, H, H};
    lce4_ksteps all = {NULL, (H + BK - 1) / BK};
    float acc[MI][NJ][4];
    lce4_gemm<false, false>(smem, A, B, n0, v0, all, acc);
    int *votes = (int *)smem; /* [WARPS] */
    float sc = scale[0] * dloss[0];
    int warp = threadIdx.x / LCE_WARP, lane = threadIdx.x % LCE_WARP, g = lane / 4, t = lane % 4;
    int wm = warp / 4 * WM, wn = warp % 4 * WN;
    bool busy = false;
    UNROLL
    for (int i = 0; i < MI; i++)
        UNROLL
        for (int h = 0; h < 2; h++) {
            long long n = n0 + wm + 16 * i + g + 8 * h;
            if (n >= N) continue;
            int tg = target[n];
            float ln = tg == LCE_IGNORE ? 0.0f : lse[n];
            UNROLL
            for (int j = 0; j < NJ; j++) {
                long long c = j0 + wn + 8 * j + 2 * t;
                bf16 pair[2];
                UNROLL
                for (int e = 0; e < 2; e++) {
                    float gv = 0.0f;
                    if (tg != LCE_IGNORE && c + e < vc) {
                        float d = lce_softmax_minus_onehot(acc[i][j][2 * h + e], ln, c0 + c + e == tg);
                        busy = busy || !lce_grad_negligible(d);
                        gv = d * sc; /* lce_grad's arithmetic: the same product in the same order */
                    }
                    pair[e] = bf16_from_f32(gv);
                }
                uint32_t word = (uint32_t)pair[0] | (uint32_t)pair[1] << 16;
                *(uint32_t *)(G + n * ldg + c) = word; /* ldg and c even: 4-byte aligned */
            }
        }
    int any = __any_sync(0xffffffffu, busy);
    if (lane == 0) votes[warp] = any;
    __syncthreads(); /* every warp's vote is in before the flags are set */
    if (threadIdx.x < 2 && j0 + threadIdx.x * FLAG < vc) { /* a half that holds columns of the chunk */
        int h = threadIdx.x, kept = votes[2 * h] || votes[2 * h + 1] || votes[4 + 2 * h] || votes[5 + 2 * h];
        int drop = filter && !kept;
        skip[tm * (ldg / FLAG) + 2 * tc + h] = drop;
        if (drop) atomicAdd(skipped, 1u);
    }
}

__global__ void lce4_lists_kernel(int tiles_n, int tiles_c, int ldt, const int *skip /* (tiles_n, ldt) */,
                                  int *dx_tiles /* (tiles_n, ldt) */, int *dx_count /* (tiles_n,) */,
                                  int *dw_tiles /* (ldt, tiles_n) */, int *dw_count /* (ldt,) */)
{
    long long i = (long long)blockIdx.x * THREADS + threadIdx.x;
    if (i < tiles_n) {
        int c = 0;
        for (int k = 0; k < tiles_c; k++)
            if (!skip[i * ldt + k]) dx_tiles[i * ldt + c++] = k;
        dx_count[i] = c;
    } else if (i < (long long)tiles_n + tiles_c) {
        long long v = i - tiles_n;
        int c = 0;
        for (int k = 0; k < tiles_n; k++)
            if (!skip[(long long)k * ldt + v]) dw_tiles[v * tiles_n + c++] = k;
        dw_count[v] = c;
    }
}

/* dx's element at: the chunk's sum v added to the chunks' before (unless first), rounded to bf16 after the
 * last */
static __device__ void dx_acc_add(float *dx_acc, bf16 *dx, long long at, float v, int first, int last)
{
    if (!first) v += dx_acc[at];
    if (last)
        dx[at] = bf16_from_f32(v);
    else
        dx_acc[at] = v;
}

__global__ void lce4_dx_kernel(int N, int H, int vc, int ldg, const bf16 *G /* (N, ldg) */,
                               const int *dx_tiles /* (ceil(N / 128), ldg / 128) */,
                               const int *dx_count /* (ceil(N / 128),) */, const bf16 *Wc /* (vc, H) */,
                               int first, int last, float *dx_acc /* (N, H) */, bf16 *dx /* (N, H) */)
{
    DYNAMIC_SHARED(unsigned char, smem);
    long long tm, th;
    lce4_block_tile(blockIdx.x, lce4_tiles(N), lce4_tiles_n(H), &tm, &th);
    long long n0 = tm * BM, h0 = th * BN;
    lce4_matrix A = {G, N, ldg, ldg}, B = {Wc, vc, H, H};
    lce4_ksteps ks = {dx_tiles + tm * (ldg / FLAG), dx_count[tm] * (FLAG / BK)};
    float acc[MI][NJ][4];
    lce4_gemm<false, true>(smem, A, B, n0, h0, ks, acc);
    int warp = threadIdx.x / LCE_WARP, lane = threadIdx.x % LCE_WARP, g = lane / 4, t = lane % 4;
    int wm = warp / 4 * WM, wn = warp % 4 * WN;
    UNROLL
    for (int i = 0; i < MI; i++)
        UNROLL
        for (int h = 0; h < 2; h++) {
            long long n = n0 + wm + 16 * i + g + 8 * h;
            if (n >= N) continue;
            UNROLL
            for (int j = 0; j < NJ; j++) {
                long long col = h0 + wn + 8 * j + 2 * t, at = n * H + col;
                if (col >= H) continue;
                float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
                if (H % 2) { /* col + 1 may be past H, and at odd: element by element */
                    dx_acc_add(dx_acc, dx, at, v0, first, last);
                    if (col + 1 < H) dx_acc_add(dx_acc, dx, at + 1, v1, first, last);
                    continue;
                }
                if (!first) { /* a lane's two columns in one 8-byte access (at even) */
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

__global__ void lce4_dw_kernel(int N, int H, int vc, int ldg, const bf16 *G /* (N, ldg) */,
                               const int *dw_tiles /* (ldg / 128, ceil(N / 128)) */,
                               const int *dw_count /* (ldg / 128,) */, const bf16 *x /* (N, H) */,
                               float *dWc /* (vc, H) */)
{
    DYNAMIC_SHARED(unsigned char, smem);
    long long tv, th;
    lce4_block_tile(blockIdx.x, lce4_tiles(vc), lce4_tiles_n(H), &tv, &th);
    long long j0 = tv * BM, h0 = th * BN;
    lce4_matrix A = {G, N, ldg, ldg}, B = {x, N, H, H}; /* A = G^T, given K (rows of x) by M (vocabulary) */
    lce4_ksteps ks = {dw_tiles + tv * lce4_tiles(N), dw_count[tv] * (FLAG / BK)};
    float acc[MI][NJ][4];
    lce4_gemm<true, true>(smem, A, B, j0, h0, ks, acc);
    int warp = threadIdx.x / LCE_WARP, lane = threadIdx.x % LCE_WARP, g = lane / 4, t = lane % 4;
    int wm = warp / 4 * WM, wn = warp % 4 * WN;
    UNROLL
    for (int i = 0; i < MI; i++)
        UNROLL
        for (int h = 0; h < 2; h++) {
            long long j = j0 + wm + 16 * i + g + 8 * h;
            if (j >= vc) continue;
            UNROLL
            for (int jj = 0; jj < NJ; jj++) {
                long long col = h0 + wn + 8 * jj + 2 * t;
                if (col >= H) continue;
                if (H % 2 == 0) { /* a lane's two columns in one 8-byte store (j H + col even) */
                    *(float2 *)(dWc + j * H + col) = make_float2(acc[i][jj][2 * h], acc[i][jj][2 * h + 1]);
                } else {
                    dWc[j * H + col] = acc[i][jj][2 * h];
                    if (col + 1 < H) dWc[j * H + col + 1] = acc[i][jj][2 * h + 1];
                }
            }
        }
}

/* ---- launchers and device memory ----------------------------------------------------------------------- */

/* the four GEMM kernels each take SMEM_BYTES of dynamic shared memory and mma.sync (sm_80) */
extern "C" const char *lce4_device_unfit(void)
{
    const cuda_launch_need needs[] = {{(const void *)lce4_forward_kernel, THREADS, SMEM_BYTES, 80, 0},
                                      {(const void *)lce4_grad_kernel, THREADS, SMEM_BYTES, 80, 0},
                                      {(const void *)lce4_dx_kernel, THREADS, SMEM_BYTES, 80, 0},
                                      {(const void *)lce4_dw_kernel, THREADS, SMEM_BYTES, 80, 0}};
    return cuda_fit(needs, 4);
}

/* more than 48 KiB of dynamic shared memory: opted in once per kernel */
static void lce4_opt_in(void)
{
    static int done;
    if (done) return;
    const cudaFuncAttribute max_dyn = cudaFuncAttributeMaxDynamicSharedMemorySize;
    CUDA_CHECK(cudaFuncSetAttribute(lce4_forward_kernel, max_dyn, SMEM_BYTES));
    CUDA_CHECK(cudaFuncSetAttribute(lce4_grad_kernel, max_dyn, SMEM_BYTES));
    CUDA_CHECK(cudaFuncSetAttribute(lce4_dx_kernel, max_dyn, SMEM_BYTES));
    CUDA_CHECK(cudaFuncSetAttribute(lce4_dw_kernel, max_dyn, SMEM_BYTES));
    done = 1;
}

/* the merge of forward's partials into lse and the row losses, and the kept tiles' lists (v5 calls both) */
extern "C" void lce4_launch_merge(int N, int V, const int32_t *target, const float *part,
                                  const float *z_target, float *lse, float *row_loss)
{
    unsigned blocks = (unsigned)(((long long)N + THREADS - 1) / THREADS);
    LAUNCH(lce4_merge_kernel, blocks, THREADS, 0)(N, V, target, part, z_target, lse, row_loss);
    CUDA_CHECK_LAST();
}

extern "C" void lce4_launch_lists(int tn, int tc, int ldt, const lce4_backward_workspace *w)
{
    unsigned blocks = (unsigned)(((long long)tn + tc + THREADS - 1) / THREADS);
    LAUNCH(lce4_lists_kernel, blocks, THREADS, 0)(tn, tc, ldt, w->skip, w->dx_tiles, w->dx_count, w->dw_tiles,
                                                  w->dw_count);
    CUDA_CHECK_LAST();
}

static unsigned lce4_grid(long long m, long long n) { return (unsigned)(lce4_tiles(m) * lce4_tiles_n(n)); }

static lce_filter_count last_filter; /* what the last backward's filter skipped: the lesson prints it */

extern "C" lce_filter_count lce4_last_filter(void) { return last_filter; }

extern "C" float *lce4_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                               lce_cuda_saved *saved)
{
    int N = (int)d->N, V = (int)d->V, H = (int)d->H;
    lce4_opt_in();
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
    LAUNCH(lce4_forward_kernel, lce4_grid(N, V), THREADS, SMEM_BYTES)(N, V, H, x, W, target, w.part,
                                                                      w.z_target);
    CUDA_CHECK_LAST();
    lce4_launch_merge(N, V, target, w.part, w.z_target, saved->lse, w.row_loss);
    float *loss = (float *)dev_alloc_array(1, DT_F32, "loss [1] f32");
    lce_launch_loss(N, w.row_loss, w.scale, loss);
    dev_free(a.base);
    return loss;
}

/* one vocabulary chunk [c0, c0 + vc): G and its flags, the kept tiles' lists, then dx and dW */
static void lce4_backward_chunk(const lce_dims *d, const lce_cuda_saved *s, const float *dloss, int filter,
                                const lce4_backward_workspace *w, int c0, int vc, bf16 *dx, float *dW)
{
    int N = (int)d->N, V = (int)d->V, H = (int)d->H, ldg = (int)lce4_chunk_cols(V);
    int tn = (int)lce4_tiles(N), tc = (int)lce4_tiles(vc), ldt = ldg / FLAG;
    int first = c0 == 0, last = (long long)c0 + ldg >= V;
    LAUNCH(lce4_grad_kernel, lce4_grid(N, vc), THREADS, SMEM_BYTES)(N, V, H, c0, vc, ldg, s->x, s->W,
                                                                    s->target, s->lse, w->scale, dloss,
                                                                    filter, w->G, w->skip, w->skipped);
    CUDA_CHECK_LAST();
    lce4_launch_lists(tn, tc, ldt, w);
    const bf16 *Wc = s->W + (long long)c0 * H;
    LAUNCH(lce4_dx_kernel, lce4_grid(N, H), THREADS, SMEM_BYTES)(N, H, vc, ldg, w->G, w->dx_tiles,
                                                                 w->dx_count, Wc, first, last, w->dx_acc, dx);
    CUDA_CHECK_LAST();
    LAUNCH(lce4_dw_kernel, lce4_grid(vc, H), THREADS, SMEM_BYTES)(N, H, vc, ldg, w->G, w->dw_tiles,
                                                                  w->dw_count, s->x, dW + (long long)c0 * H);
    CUDA_CHECK_LAST();
}

extern "C" void lce4_backward(const lce_dims *d, int filter, lce_cuda_saved *saved, const float *dloss,
                              bf16 **dx, float **dW)
{
    long long V = (long long)d->V, ldg = lce4_chunk_cols(V);
    lce4_opt_in();
    bf16 *gx = (bf16 *)dev_alloc_array(lce_x_count(d), DT_BF16, "dx [N,H] bf16");
    float *gw = (float *)dev_alloc_array(lce_w_count(d), DT_F32, "dW [V,H] f32");
    arena a;
    lce4_backward_workspace w;
    size_t bytes = ARENA_BYTES(a, lce4_carve_backward(&a, d, &w));
    arena_init(&a, dev_alloc(bytes, "workspace: G [N,8192] bf16 + tile flags, lists + dx_acc [N,H] f32"),
               bytes);
    lce4_carve_backward(&a, d, &w);
    CUDA_CHECK(cudaMemset(w.skipped, 0, sizeof *w.skipped));
    lce_launch_mean_scale((long long)d->N, saved->target, w.scale);
    for (long long c0 = 0; c0 < V; c0 += ldg) /* the chunks in order: dx's fp32 sums meet in a fixed order */
        lce4_backward_chunk(d, saved, dloss, filter, &w, (int)c0, (int)(V - c0 < ldg ? V - c0 : ldg), gx, gw);
    unsigned skipped;
    CUDA_CHECK(cudaMemcpy(&skipped, w.skipped, sizeof skipped, cudaMemcpyDeviceToHost));
    last_filter.filter = filter;
    last_filter.tiles = (unsigned long long)lce4_tiles((long long)d->N) * (unsigned long long)lce4_tiles(V);
    last_filter.skipped = skipped;
    dev_free(a.base);
    dev_free(saved->lse);
    saved->lse = NULL;
    *dx = gx;
    *dW = gw;
}
