/* linear_ce_v3.cu - lesson 5, cuda-v3: Cut Cross-Entropy on tensor cores. Changed from v2: logits are
 * [32, 64] tiles x_tile . W_tile^T by bf16 WMMA (fp32 sums), H staged 64 columns at a time through padded
 * shared memory, so one W tile serves 32 rows of x; backward forms G in bf16 and adds G . W into dx and
 * G^T . x into dW by WMMA, a pair of tiles per pass over an fp32 slab, one writer per element. --filter
 * skips tiles whose |softmax - onehot| are all below 2^-12 (CCE's gradient filter). */
#include "linear_ce.h"

#include "runtime/cuda_check.h"
#include "runtime/cuda_track.h"
#include "runtime/launch.h"

#include <cuda_bf16.h>
#include <mma.h>

namespace wmma = nvcuda::wmma;

#define LDK (LCE3_TILE_K + LCE3_PAD_BF16) /* staged x and W rows (bf16) */
#define LDZ (LCE3_TILE_V + LCE3_PAD_F32)  /* logit tile rows (f32) */
/* dx's G rows: a pair of V-tiles side by side (bf16) */
#define LDG_DX (LCE3_PAIR * LCE3_TILE_V + LCE3_PAD_BF16)
/* dW's G rows: a pair of row blocks stacked (bf16) */
#define LDG_DW (LCE3_TILE_V + LCE3_PAD_BF16)
#define LCE3_PAIR_V (LCE3_PAIR * LCE3_TILE_V) /* the dx update's K: vocabulary rows per accumulator pass */
#define LCE3_PAIR_N (LCE3_PAIR * LCE3_TILE_N) /* the dW update's K: rows of x per accumulator pass */
#define LDB (LCE3_SLAB_H + LCE3_PAD_BF16) /* staged operand slab rows (bf16) */
#define LDC (LCE3_SLAB_H + LCE3_PAD_F32)  /* staged accumulator slab rows (f32) */

static_assert(LCE3_TILE_V == LCE3_WARPS * LCE3_WMMA,
              "the logit tile gives each warp one column of fragments");
static_assert(LCE3_SLAB_H == LCE3_WARPS * LCE3_WMMA, "the dx slab gives each warp one column of fragments");
static_assert(LCE3_TILE_V == LCE3_WARPS * LCE3_WMMA, "the dW update gives each warp one row of fragments");
static_assert(LCE3_TILE_N % LCE3_WMMA == 0 && LCE3_TILE_K % LCE3_WMMA == 0, "tiles are whole fragments");
static_assert(LCE3_TILE_K % 8 == 0 && LCE3_SLAB_H % 8 == 0, "staged rows are whole 16-byte chunks");
static_assert(
    LCE3_THREADS == LCE3_TILE_N * LCE3_ROW_LANES && LCE3_TILE_V % LCE3_ROW_LANES == 0,
    "the row passes give every row a quad of lanes of one warp and each lane a quarter of the tile");
static_assert((LCE3_WMMA * LDK * 2) % 32 == 0 && (LCE3_WMMA * LDZ * 4) % 32 == 0 &&
                  (LCE3_WMMA * LDG_DX * 2) % 32 == 0 && (LCE3_WMMA * LDG_DW * 2) % 32 == 0 &&
                  (LCE3_WMMA * LDB * 2) % 32 == 0 && (LCE3_WMMA * LDC * 4) % 32 == 0,
              "every fragment's first element is 32-byte aligned (WMMA's pointer rule) at 16-row steps");

/* The logit tile and its staging; every array starts 32-byte aligned (WMMA loads and stores need it). */
struct __align__(32) lce3_logit_smem {
    bf16 xs[LCE3_TILE_N][LDK];  /* x[n0 + i, k0 + k], zero past N or H */
    bf16 ws[LCE3_TILE_V][LDK];  /* W[v0 + j, k0 + k], zero past V or H */
    float z[LCE3_TILE_N][LDZ];  /* the logits of the tile (garbage past N or V: never read there) */
};

/* One slab of a gradient update: used only between logit phases, so it shares their memory. */
struct __align__(32) lce3_slab_smem {
    /* W rows (dx) or x rows (dW), 64 columns */
    bf16 b[LCE3_PAIR_V > LCE3_PAIR_N ? LCE3_PAIR_V : LCE3_PAIR_N][LDB];
    /* fp32 dx_acc rows (dx) or dW rows (dW) */
    float c[LCE3_TILE_V > LCE3_TILE_N ? LCE3_TILE_V : LCE3_TILE_N][LDC];
};

/* Backward's shared memory: a logit phase (twice: a pair of tiles) then an update phase over the same bytes;
 * the pair's G lives across both. */
struct __align__(32) lce3_back_smem {
    union {
        lce3_logit_smem l;
        lce3_slab_smem u;
    };
    /* G in bf16 (zero for rows past N, ignored rows, columns past V, filtered tiles): dx [32][2 * 64] (a pair
     * of V-tiles side by side), dW [2 * 32][64] (a pair of row blocks stacked) */
    bf16 g[LCE3_TILE_N * LDG_DX > LCE3_PAIR_N * LDG_DW ? LCE3_TILE_N * LDG_DX : LCE3_PAIR_N * LDG_DW];
    int busy[LCE3_WARPS]; /* the filter's vote: a warp saw an entry that is not negligible */
};
static_assert(sizeof(lce3_back_smem) <= LCE2_SMEM_LIMIT, "backward's static shared memory fits 48 KiB");

/* dst (R, ldd) in shared memory = src rows [r0, r0 + R) x columns [c0, c0 + C) of a bf16 (rows, cols) matrix
 * with row stride cols, zero outside it. Consecutive threads take consecutive 16-byte chunks of a row. */
static __device__ void lce3_stage_bf16(bf16 *dst, int ldd, const bf16 *src, int rows, int cols, int r0,
                                       int c0, int R, int C)
{
    int chunks = C / 8;
    bool vec = cols % 8 == 0 && ((unsigned long long)src & 15) == 0; /* every row starts 16-byte aligned */
    for (int e = threadIdx.x; e < R * chunks; e += blockDim.x) {
        int r = e / chunks, c = (e % chunks) * 8, gr = r0 + r, gc = c0 + c;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (gr < rows && gc < cols) {
            const bf16 *p = src + (long long)gr * cols + gc;
            if (vec) {
                v = *(const uint4 *)p; /* gc + 8 <= cols since both are multiples of 8 */
            } else {
                bf16 t[8];
                for (int k = 0; k < 8; k++) t[k] = gc + k < cols ? p[k] : (bf16)0;
                memcpy(&v, t, sizeof v);
            }
        }
        *(uint4 *)(dst + r * ldd + c) = v;
    }
}

/* dst (R, LDC) in shared memory = the f32 slab rows [r0, r0 + R) x columns [h0, h0 + LCE3_SLAB_H) of acc
 * (rows, H), zero outside; consecutive threads read consecutive floats (coalesced). */
static __device__ void lce3_load_acc(float *dst, const float *acc, int rows, int H, int r0, int h0, int R)
{
    for (int e = threadIdx.x; e < R * LCE3_SLAB_H; e += blockDim.x) {
        int r = e / LCE3_SLAB_H, c = e % LCE3_SLAB_H;
        dst[r * LDC + c] = r0 + r < rows && h0 + c < H ? acc[(long long)(r0 + r) * H + h0 + c] : 0.0f;
    }
}

/* the inverse of lce3_load_acc, inside (rows, H) only; the same element-to-thread map, so a thread writes
 * back only what it loaded itself */
static __device__ void lce3_store_acc(const float *src, float *acc, int rows, int H, int r0, int h0, int R)
{
    for (int e = threadIdx.x; e < R * LCE3_SLAB_H; e += blockDim.x) {
        int r = e / LCE3_SLAB_H, c = e % LCE3_SLAB_H;
        if (r0 + r < rows && h0 + c < H) acc[(long long)(r0 + r) * H + h0 + c] = src[r * LDC + c];
    }
}

/* s->z = x[n0 .. n0+32) . W[v0 .. v0+64)^T over all of H. Warp w owns logit columns [16w, 16w + 16) of both
 * 16-row halves: one B fragment (W) serves two A fragments (x). */
static __device__ void lce3_logit_tile(lce3_logit_smem *s, const bf16 *x, const bf16 *W, int N, int V, int H,
                                       int n0, int v0)
{
    int warp = threadIdx.x / LCE_WARP;
    wmma::fragment<wmma::accumulator, LCE3_WMMA, LCE3_WMMA, LCE3_WMMA, float> acc[LCE3_TILE_N / LCE3_WMMA];
    for (int m = 0; m < LCE3_TILE_N / LCE3_WMMA; m++) wmma::fill_fragment(acc[m], 0.0f);
    for (int k0 = 0; k0 < H; k0 += LCE3_TILE_K) {
        lce3_stage_bf16(&s->xs[0][0], LDK, x, N, H, n0, k0, LCE3_TILE_N, LCE3_TILE_K);
        lce3_stage_bf16(&s->ws[0][0], LDK, W, V, H, v0, k0, LCE3_TILE_V, LCE3_TILE_K);
        __syncthreads(); /* the staged x and W columns are complete before any warp loads a fragment */
        for (int kk = 0; kk < LCE3_TILE_K; kk += LCE3_WMMA) {
            /* B (k, j) = W[v0 + j, k0 + k] sits at ws[j][k]: column-major with leading dimension LDK */
            wmma::fragment<wmma::matrix_b, LCE3_WMMA, LCE3_WMMA, LCE3_WMMA, __nv_bfloat16, wmma::col_major> b;
            wmma::load_matrix_sync(b, (const __nv_bfloat16 *)&s->ws[warp * LCE3_WMMA][kk], LDK);
            for (int m = 0; m < LCE3_TILE_N / LCE3_WMMA; m++) {
                wmma::fragment<wmma::matrix_a, LCE3_WMMA, LCE3_WMMA, LCE3_WMMA, __nv_bfloat16,
                               wmma::row_major> a;
                wmma::load_matrix_sync(a, (const __nv_bfloat16 *)&s->xs[m * LCE3_WMMA][kk], LDK);
                wmma::mma_sync(acc[m], a, b, acc[m]);
            }
        }
        __syncthreads(); /* every warp is done with this stage before the next one overwrites it */
    }
    for (int m = 0; m < LCE3_TILE_N / LCE3_WMMA; m++)
        wmma::store_matrix_sync(&s->z[m * LCE3_WMMA][warp * LCE3_WMMA], acc[m], LDZ, wmma::mem_row_major);
    __syncthreads(); /* the whole logit tile is in shared memory before the row passes read it */
}

/* Row pass of forward: lane q of row i's quad folds columns q, q + 4, q + 8, ... of the tile into its running
 * (max, sum), and the lane holding the target's column records the target logit. Interleaved columns: the 32
 * lanes of a warp (8 rows x 4) read 32 distinct banks (row stride 68 floats = 4 banks); quarters of 16
 * contiguous columns would put 4 lanes on each bank. */
static __device__ lce_lse_acc lce3_fold_tile(const lce3_logit_smem *s, lce_lse_acc a, int t, int V, int v0,
                                             float *z_target)
{
    int i = threadIdx.x / LCE3_ROW_LANES, q = threadIdx.x % LCE3_ROW_LANES;
    for (int j = q; j < LCE3_TILE_V && v0 + j < V; j += LCE3_ROW_LANES) {
        float z = s->z[i][j];
        a = lce_lse_add(a, z);
        if (v0 + j == t) *z_target = z;
    }
    return a;
}

__global__ void lce3_forward_kernel(int N, int V, int H, const bf16 *x /* (N, H) */,
                                    const bf16 *W /* (V, H) */, const int32_t *target /* (N,) */,
                                    float *lse /* (N,) */, float *row_loss /* (N,) */)
{
    __shared__ lce3_logit_smem s;
    __shared__ float z_target[LCE3_TILE_N]; /* written by the one lane whose columns hold the target */
    int n0 = blockIdx.x * LCE3_TILE_N, i = threadIdx.x / LCE3_ROW_LANES, n = n0 + i;
    int t = n < N ? target[n] : LCE_IGNORE; /* rows past N ride along as ignored rows: no early exit */
    lce_lse_acc a = lce_lse_init();
    for (int v0 = 0; v0 < V; v0 += LCE3_TILE_V) {
        lce3_logit_tile(&s, x, W, N, V, H, n0, v0);
        /* the next tile's z is stored only after lce3_logit_tile's first barrier, so no barrier is needed
         * here */
        if (t != LCE_IGNORE) a = lce3_fold_tile(&s, a, t, V, v0, &z_target[i]);
    }
    /* merge the quad; every lane ends with the same pair */
    for (int off = 1; off < LCE3_ROW_LANES; off *= 2) {
        lce_lse_acc b;
        b.m = __shfl_xor_sync(0xffffffffu, a.m, off);
        b.s = __shfl_xor_sync(0xffffffffu, a.s, off);
        a = lce_lse_merge(a, b);
    }
    __syncthreads(); /* z_target of every row is written before lane 0 of the quad reads it */
    if (threadIdx.x % LCE3_ROW_LANES == 0 && n < N) {
        float l = t == LCE_IGNORE ? 0.0f : lce_lse_finish(a);
        lse[n] = l;
        row_loss[n] = t == LCE_IGNORE ? 0.0f : lce_row_loss(l, z_target[i]);
    }
}

/* g (ldg) = bf16((softmax - onehot) * sc) of the logit tile in k->l.z; returns, to every thread, whether
 * every entry of the tile is negligible (lce_grad_negligible: CCE's filter), and with filter on writes zeros
 * for such a tile. Rows past N, ignored rows and columns past V are 0 and count as negligible. Columns
 * interleaved over the quad as in lce3_fold_tile (conflict-free); each thread writes the same entries as
 * lce3_zero_g_tile. */
static __device__ bool lce3_grad_tile(lce3_back_smem *k, bf16 *g, int ldg, const int32_t *target,
                                      const float *lse, int N, int V, int n0, int v0, float sc, int filter)
{
    enum { w = LCE3_TILE_V / LCE3_ROW_LANES };
    int i = threadIdx.x / LCE3_ROW_LANES, q = threadIdx.x % LCE3_ROW_LANES;
    int n = n0 + i, t = n < N ? target[n] : LCE_IGNORE;
    float ln = t == LCE_IGNORE ? 0.0f : lse[n], gv[w];
    bool busy = false;
    for (int jj = 0; jj < w; jj++) {
        int j = jj * LCE3_ROW_LANES + q;
        gv[jj] = 0.0f;
        if (t != LCE_IGNORE && v0 + j < V) {
            float d = lce_softmax_minus_onehot(k->l.z[i][j], ln, v0 + j == t);
            busy = busy || !lce_grad_negligible(d);
            gv[jj] = d * sc; /* lce_grad's arithmetic: the same product in the same order */
        }
    }
    int any = __any_sync(0xffffffffu, busy);
    if (threadIdx.x % LCE_WARP == 0) k->busy[threadIdx.x / LCE_WARP] = any;
    /* every warp's vote is written (and every read of z done) before anyone reads the votes */
    __syncthreads();
    bool negligible = true;
    for (int wp = 0; wp < LCE3_WARPS; wp++) negligible = negligible && !k->busy[wp];
    for (int jj = 0; jj < w; jj++)
        g[i * ldg + jj * LCE3_ROW_LANES + q] = bf16_from_f32(filter && negligible ? 0.0f : gv[jj]);
    return negligible;
}

/* g (ldg) = 0 over one tile's place: the second tile of a pair that lies past N or V. Its operand rows are
 * staged as zeros, so a finite stale G would add nothing, but a NaN left by the previous pair times 0 is
 * NaN. */
static __device__ void lce3_zero_g_tile(bf16 *g, int ldg)
{
    int i = threadIdx.x / LCE3_ROW_LANES, q = threadIdx.x % LCE3_ROW_LANES;
    for (int j = q; j < LCE3_TILE_V; j += LCE3_ROW_LANES) g[i * ldg + j] = 0;
}

/* One 16x16 fragment of C (shared, LDC) += A (16 x 16 ksteps) . B (16 ksteps x 16, row-major, LDB), A's
 * layout given by ALayout (row-major: A[m][k] at a[m * lda + k], astep 16; col-major: at a[k * lda + m],
 * astep 16 lda). */
template <typename ALayout> static __device__ void lce3_fragment_update(float *c, const bf16 *a, int lda,
                                                                        int astep, const bf16 *b, int ksteps)
{
    wmma::fragment<wmma::accumulator, LCE3_WMMA, LCE3_WMMA, LCE3_WMMA, float> acc;
    wmma::load_matrix_sync(acc, c, LDC, wmma::mem_row_major);
    for (int k = 0; k < ksteps; k++) {
        wmma::fragment<wmma::matrix_a, LCE3_WMMA, LCE3_WMMA, LCE3_WMMA, __nv_bfloat16, ALayout> fa;
        wmma::fragment<wmma::matrix_b, LCE3_WMMA, LCE3_WMMA, LCE3_WMMA, __nv_bfloat16, wmma::row_major> fb;
        wmma::load_matrix_sync(fa, (const __nv_bfloat16 *)(a + k * astep), lda);
        wmma::load_matrix_sync(fb, (const __nv_bfloat16 *)(b + k * LCE3_WMMA * LDB), LDB);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c, acc, LDC, wmma::mem_row_major);
}

/* dx_acc rows [n0, n0 + 32) += G (32 x 128) . W rows [v0, v0 + 128), one LCE3_SLAB_H slab of H at a time;
 * warp w owns slab columns [16w, 16w + 16) of both 16-row halves. Ends with a barrier: the slab's bytes are
 * the next logit phase's. */
static __device__ void lce3_update_dx(lce3_back_smem *k, const bf16 *W, float *dx_acc, int N, int V, int H,
                                      int n0, int v0)
{
    int warp = threadIdx.x / LCE_WARP;
    for (int h0 = 0; h0 < H; h0 += LCE3_SLAB_H) {
        lce3_stage_bf16(&k->u.b[0][0], LDB, W, V, H, v0, h0, LCE3_PAIR_V, LCE3_SLAB_H);
        lce3_load_acc(&k->u.c[0][0], dx_acc, N, H, n0, h0, LCE3_TILE_N);
        __syncthreads(); /* the W slab and the accumulator slab are complete before any fragment load */
        for (int m = 0; m < LCE3_TILE_N / LCE3_WMMA; m++)
            lce3_fragment_update<wmma::row_major>(&k->u.c[m * LCE3_WMMA][warp * LCE3_WMMA],
                                                  &k->g[m * LCE3_WMMA * LDG_DX], LDG_DX, LCE3_WMMA,
                                                  &k->u.b[0][warp * LCE3_WMMA], LCE3_PAIR_V / LCE3_WMMA);
        /* every fragment is stored back before the slab goes out and the next one comes in */
        __syncthreads();
        lce3_store_acc(&k->u.c[0][0], dx_acc, N, H, n0, h0, LCE3_TILE_N);
    }
    __syncthreads(); /* the slab is written back before the next logit phase reuses its bytes */
}

/* dW rows [v0, v0 + 64) += G^T (64 x 64) . x rows [n0, n0 + 64), a slab of H at a time; warp w owns
 * vocabulary rows [16w, 16w + 16) of the slab. G^T (j, i) = g[i][j]: G read column-major. Ends with a
 * barrier, as above. */
static __device__ void lce3_update_dw(lce3_back_smem *k, const bf16 *x, float *dW, int N, int V, int H,
                                      int n0, int v0)
{
    int warp = threadIdx.x / LCE_WARP;
    const bf16 *gt = &k->g[warp * LCE3_WMMA]; /* G^T's 16 rows of this warp, read column-major */
    for (int h0 = 0; h0 < H; h0 += LCE3_SLAB_H) {
        lce3_stage_bf16(&k->u.b[0][0], LDB, x, N, H, n0, h0, LCE3_PAIR_N, LCE3_SLAB_H);
        lce3_load_acc(&k->u.c[0][0], dW, V, H, v0, h0, LCE3_TILE_V);
        __syncthreads(); /* the x slab and the dW slab are complete before any fragment load */
        for (int f = 0; f < LCE3_SLAB_H / LCE3_WMMA; f++)
            lce3_fragment_update<wmma::col_major>(&k->u.c[warp * LCE3_WMMA][f * LCE3_WMMA], gt, LDG_DW,
                                                  LCE3_WMMA * LDG_DW, &k->u.b[0][f * LCE3_WMMA],
                                                  LCE3_PAIR_N / LCE3_WMMA);
        /* every fragment is stored back before the slab goes out and the next one comes in */
        __syncthreads();
        lce3_store_acc(&k->u.c[0][0], dW, V, H, v0, h0, LCE3_TILE_V);
    }
    __syncthreads(); /* the slab is written back before the next logit phase reuses its bytes */
}

/* rows [r0, r0 + R) of a (rows, H) f32 matrix set to 0; element e belongs to thread e % blockDim.x */
static __device__ void lce3_zero_rows(float *p, int rows, int H, int r0, int R)
{
    long long n = (long long)(rows - r0 < R ? rows - r0 : R) * H;
    for (long long e = threadIdx.x; e < n; e += blockDim.x) {
        p[(long long)r0 * H + e] = 0.0f;
    }
}

/* G of the pair's tile r (of 2) into its place in k->g, or zeros where that tile lies past the matrix; counts
 * the tile in *skipped when the filter drops it. Returns 1 when the tile still adds something. */
static __device__ int lce3_pair_tile(lce3_back_smem *k, bf16 *g, int ldg, const bf16 *x, const bf16 *W,
                                     const int32_t *target, const float *lse, int N, int V, int H, int n0,
                                     int v0, float sc, int filter, unsigned *skipped)
{
    if (n0 >= N || v0 >= V) { /* uniform across the block */
        lce3_zero_g_tile(g, ldg);
        return 0;
    }
    lce3_logit_tile(&k->l, x, W, N, V, H, n0, v0);
    bool negligible = lce3_grad_tile(k, g, ldg, target, lse, N, V, n0, v0, sc, filter);
    if (filter && negligible && threadIdx.x == 0) atomicAdd(skipped, 1u);
    return !(filter && negligible);
}

__global__ void lce3_dx_kernel(int N, int V, int H, const bf16 *x /* (N, H) */, const bf16 *W /* (V, H) */,
                               const int32_t *target /* (N,) */, const float *lse /* (N,) */,
                               const float *scale /* (1,) */, const float *dloss /* (1,) */, int filter,
                               float *dx_acc /* (N, H) */, bf16 *dx /* (N, H) */,
                               unsigned *skipped /* (1,) */)
{
    __shared__ lce3_back_smem k;
    int n0 = blockIdx.x * LCE3_TILE_N;
    float sc = scale[0] * dloss[0];
    lce3_zero_rows(dx_acc, N, H, n0, LCE3_TILE_N);
    __syncthreads(); /* the zeroed rows are visible before the first slab load reads them in another order */
    for (long long p0 = 0; p0 < V; p0 += LCE3_PAIR_V) { /* 64 bits: V may be 2^31 - 65, where + 128 wraps */
        int v0 = (int)p0, adds = 0; /* uniform across the block: every thread read the same votes */
        for (int r = 0; r < LCE3_PAIR; r++)
            adds += lce3_pair_tile(&k, &k.g[r * LCE3_TILE_V], LDG_DX, x, W, target, lse, N, V, H, n0,
                                   v0 + r * LCE3_TILE_V, sc, filter, skipped);
        if (adds) lce3_update_dx(&k, W, dx_acc, N, V, H, n0, v0);
    }
    __syncthreads(); /* the last slab is written back before the rows are read in the rounding order */
    long long n = (long long)(N - n0 < LCE3_TILE_N ? N - n0 : LCE3_TILE_N) * H;
    for (long long e = threadIdx.x; e < n; e += blockDim.x) { /* rounded once */
        dx[(long long)n0 * H + e] = bf16_from_f32(dx_acc[(long long)n0 * H + e]);
    }
}

__global__ void lce3_dw_kernel(int N, int V, int H, const bf16 *x /* (N, H) */, const bf16 *W /* (V, H) */,
                               const int32_t *target /* (N,) */, const float *lse /* (N,) */,
                               const float *scale /* (1,) */, const float *dloss /* (1,) */, int filter,
                               float *dW /* (V, H) */, unsigned *skipped /* (1,) */)
{
    __shared__ lce3_back_smem k;
    int v0 = blockIdx.x * LCE3_TILE_V;
    float sc = scale[0] * dloss[0];
    lce3_zero_rows(dW, V, H, v0, LCE3_TILE_V);
    __syncthreads(); /* the zeroed rows are visible before the first slab load reads them in another order */
    for (int n0 = 0; n0 < N; n0 += LCE3_PAIR_N) {
        int adds = 0; /* uniform across the block */
        for (int r = 0; r < LCE3_PAIR; r++)
            adds += lce3_pair_tile(&k, &k.g[r * LCE3_TILE_N * LDG_DW], LDG_DW, x, W, target, lse, N, V, H,
                                   n0 + r * LCE3_TILE_N, v0, sc, filter, skipped);
        if (adds) lce3_update_dw(&k, x, dW, N, V, H, n0, v0);
    }
}

static unsigned lce3_blocks(int n, int tile) { return (unsigned)((n + tile - 1) / tile); }

static void lce3_launch_forward(int N, int V, int H, const bf16 *x, const bf16 *W, const int32_t *target,
                                float *lse, float *row_loss)
{
    LAUNCH(lce3_forward_kernel, lce3_blocks(N, LCE3_TILE_N), LCE3_THREADS, 0)
    (N, V, H, x, W, target, lse, row_loss);
    CUDA_CHECK_LAST();
}

static void lce3_launch_dx(int N, int V, int H, const bf16 *x, const bf16 *W, const int32_t *target,
                           const float *lse, const float *scale, const float *dloss, int filter,
                           float *dx_acc, bf16 *dx, unsigned *skipped)
{
    LAUNCH(lce3_dx_kernel, lce3_blocks(N, LCE3_TILE_N), LCE3_THREADS, 0)
    (N, V, H, x, W, target, lse, scale, dloss, filter, dx_acc, dx, skipped);
    CUDA_CHECK_LAST();
}

static void lce3_launch_dw(int N, int V, int H, const bf16 *x, const bf16 *W, const int32_t *target,
                           const float *lse, const float *scale, const float *dloss, int filter, float *dW,
                           unsigned *skipped)
{
    LAUNCH(lce3_dw_kernel, lce3_blocks(V, LCE3_TILE_V), LCE3_THREADS, 0)
    (N, V, H, x, W, target, lse, scale, dloss, filter, dW, skipped);
    CUDA_CHECK_LAST();
}

static lce3_filter_count last_filter; /* what the last backward's filter skipped: the lesson prints it */

extern "C" lce3_filter_count lce3_last_filter(void) { return last_filter; }

extern "C" float *lce3_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                               lce_cuda_saved *saved)
{
    int N = (int)d->N, V = (int)d->V, H = (int)d->H;
    saved->x = x;
    saved->W = W;
    saved->target = target;
    saved->lse = (float *)dev_alloc_array(d->N, DT_F32, "lse [N] f32 (saved)");
    arena a;
    lce2_forward_workspace w; /* v2's forward workspace */
    size_t bytes = ARENA_BYTES(a, lce2_carve_forward(&a, d, &w));
    arena_init(&a, dev_alloc(bytes, "workspace: row losses [N] f32 + scale"), bytes);
    lce2_carve_forward(&a, d, &w);
    lce_launch_mean_scale(N, target, w.scale);
    lce3_launch_forward(N, V, H, x, W, target, saved->lse, w.row_loss);
    float *loss = (float *)dev_alloc_array(1, DT_F32, "loss [1] f32");
    lce_launch_loss(N, w.row_loss, w.scale, loss);
    dev_free(a.base);
    return loss;
}

static void read_filter_count(const lce_dims *d, int filter, const unsigned *skipped /* (2,) device */)
{
    unsigned h[2];
    CUDA_CHECK(cudaMemcpy(h, skipped, sizeof h, cudaMemcpyDeviceToHost));
    last_filter.filter = filter;
    last_filter.tiles = (unsigned long long)((d->N + LCE3_TILE_N - 1) / LCE3_TILE_N) *
                        ((d->V + LCE3_TILE_V - 1) / LCE3_TILE_V);
    last_filter.skipped_dx = h[0];
    last_filter.skipped_dw = h[1];
}

extern "C" void lce3_backward(const lce_dims *d, int filter, lce_cuda_saved *saved, const float *dloss,
                              bf16 **dx, float **dW)
{
    int N = (int)d->N, V = (int)d->V, H = (int)d->H;
    bf16 *gx = (bf16 *)dev_alloc_array(lce_x_count(d), DT_BF16, "dx [N,H] bf16");
    float *gw = (float *)dev_alloc_array(lce_w_count(d), DT_F32, "dW [V,H] f32");
    arena a;
    lce3_backward_workspace w;
    size_t bytes = ARENA_BYTES(a, lce3_carve_backward(&a, d, &w));
    arena_init(&a, dev_alloc(bytes, "workspace: dx_acc [N,H] f32 + scale + skipped tiles"), bytes);
    lce3_carve_backward(&a, d, &w);
    CUDA_CHECK(cudaMemset(w.skipped, 0, 2 * sizeof *w.skipped));
    /* 1 / n_valid again rather than a second saved float: one pass over target (N,) */
    lce_launch_mean_scale(N, saved->target, w.scale);
    lce3_launch_dx(N, V, H, saved->x, saved->W, saved->target, saved->lse, w.scale, dloss, filter, w.dx_acc,
                   gx, &w.skipped[0]);
    lce3_launch_dw(N, V, H, saved->x, saved->W, saved->target, saved->lse, w.scale, dloss, filter, gw,
                   &w.skipped[1]);
    read_filter_count(d, filter, w.skipped);
    dev_free(a.base);
    dev_free(saved->lse);
    saved->lse = NULL;
    *dx = gx;
    *dW = gw;
}
