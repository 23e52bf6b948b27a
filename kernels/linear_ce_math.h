/* linear_ce_math.h - lesson 5's shared device side: the arithmetic of one row of cross-entropy, shared by the
 * CPU code and the CUDA kernels (HD), launch geometry, and the CUDA versions' launchers.
 *
 * Row n has logits z[0..V-1] and a target t. With lse = log sum_v exp(z[v]):
 *     loss_n   = lse - z[t]
 *     g[v]     = (exp(z[v] - lse) - [v == t]) * scale,   scale = 1 / n_valid  (the mean's 1/n)
 * and an ignored row (t == LCE_IGNORE) has loss 0 and g = 0.
 *
 * lse is taken in one read of the row with an online logsumexp: a running maximum m and the sum s of
 * exp(z - m), rescaled by exp(m_old - m_new) whenever the maximum grows. Partial (m, s) pairs from different
 * threads merge the same way. The second read of the row writes g; nothing else is stored per row.
 */
#ifndef KERNELS_LINEAR_CE_MATH_H
#define KERNELS_LINEAR_CE_MATH_H

#include <math.h>
#include "runtime/bf16.h"
#include "runtime/hd.h"

typedef struct {
    float m; /* running maximum; -inf before the first element */
    float s; /* sum of exp(z - m) */
} lce_lse_acc;

HD lce_lse_acc lce_lse_init(void)
{
    lce_lse_acc a;
    a.m = -INFINITY;
    a.s = 0.0f;
    return a;
}

/* exp(m_old - m_new), 0 when nothing was summed under m_old yet */
HD float lce_rescale(float m_old, float m_new) { return m_old == -INFINITY ? 0.0f : expf(m_old - m_new); }

HD lce_lse_acc lce_lse_add(lce_lse_acc a, float z)
{
    float mn = fmaxf(a.m, z);
    a.s = a.s * lce_rescale(a.m, mn) + expf(z - mn);
    a.m = mn;
    return a;
}

HD lce_lse_acc lce_lse_merge(lce_lse_acc a, lce_lse_acc b)
{
    float mn = fmaxf(a.m, b.m);
    if (mn == -INFINITY) return a; /* both empty */
    a.s = a.s * lce_rescale(a.m, mn) + b.s * lce_rescale(b.m, mn);
    a.m = mn;
    return a;
}

HD float lce_lse_finish(lce_lse_acc a) { return a.m + logf(a.s); }

/* loss of one counted row: lse - z[target] */
HD float lce_row_loss(float lse, float z_target) { return lse - z_target; }

/* softmax minus the one-hot target, before any scale: the quantity Cut Cross-Entropy's filter looks at */
HD float lce_softmax_minus_onehot(float z, float lse, int is_target)
{
    return expf(z - lse) - (is_target ? 1.0f : 0.0f);
}

/* g[v] for a counted row: softmax minus the one-hot target, times the mean's scale */
HD float lce_grad(float z, float lse, int is_target, float scale)
{
    return lce_softmax_minus_onehot(z, lse, is_target) * scale;
}

/* Cut Cross-Entropy's gradient filter (cuda-v3 --filter): a tile's update of dx and dW is skipped when every
 * |softmax - onehot| of it is below LCE_FILTER_EPS. CCE's default ("auto") is the eps of the gradient's dtype
 * over 32: bf16's eps is 2^-7, so 2^-12, the unscaled value compared before dloss and 1/n_valid multiply it.
 * Strictly below: a NaN is never negligible, so a NaN row is never filtered away. */
#define LCE_FILTER_EPS (1.0f / 4096.0f)
HD int lce_grad_negligible(float softmax_minus_onehot)
{
    return fabsf(softmax_minus_onehot) < LCE_FILTER_EPS;
}

/* one logit z = a . b of two bf16 rows of length H, products and sum in fp32 (in index order: deterministic,
 * the same in forward and in backward's recomputation) */
HD float lce_dot_bf16(const bf16 *a, const bf16 *b, int H)
{
    float s = 0.0f;
    for (int h = 0; h < H; h++) {
        s += bf16_to_f32(a[h]) * bf16_to_f32(b[h]);
    }
    return s;
}

/* ---- launch geometry, read by the kernels and by the C fit checks -------------------------------------- */
#define LCE_ROW_THREADS 256  /* one block per row of logits; 8 warps */
#define LCE_WARP 32
#define LCE_SCALE_THREADS 256 /* elementwise kernels */

/* cuda-v2 (kernels/linear_ce_v2.cu), the Cut Cross-Entropy way: no logits buffer at all.
 *   forward   one block of LCE2_THREADS per row; thread i takes logits v = i, i + LCE2_THREADS, ...
 *   dx        one block per row; logits in blocks of LCE2_THREADS (one per thread), then the block adds that
 *             block's g . W into an fp32 accumulator of H floats in dynamic shared memory
 *   dW        one block per tile of LCE2_TILE_V vocabulary rows (it alone writes them: no atomics), looping
 *             over
 *             the rows of x in tiles of LCE2_TILE_N; the g tile [LCE2_TILE_N, LCE2_TILE_V] lives in shared
 *             memory */
#define LCE2_THREADS 128
#define LCE2_TILE_V 32
#define LCE2_TILE_N 32
/* dynamic shared memory a block may use without opting in (sm_80 and sm_90 alike); the dx kernel needs 4 H
 * bytes */
#define LCE2_SMEM_LIMIT (48 * 1024)
#define LCE2_DX_SMEM_BYTES(H) ((size_t)(H) * sizeof(float))

/* cuda-v3 (kernels/linear_ce_v3.cu), Cut Cross-Entropy on tensor cores: every logit is computed as part
 * of a [LCE3_TILE_N, LCE3_TILE_V] tile by bf16 WMMA (m16n16k16, fp32 accumulators), H staged through shared
 * memory LCE3_TILE_K columns at a time with 16-byte loads.
 *   forward   one block per row block; it walks every V-tile with an online logsumexp per row
 *   dx        one block per row block (it alone owns those rows of the fp32 dx workspace)
 *   dW        one block per V-tile (it alone owns those rows of dW)
 * The gradient updates dx += G W and dW += G^T x go LCE3_SLAB_H columns of H at a time. */
#define LCE3_WARPS 4
#define LCE3_THREADS (LCE3_WARPS * LCE_WARP)
#define LCE3_WMMA 16    /* the m, n and k of one bf16 WMMA fragment */
#define LCE3_TILE_N 32  /* rows of x per logit tile: 2 fragments */
#define LCE3_TILE_V 64  /* vocabulary rows per logit tile: 4 fragments, one column of fragments per warp */
#define LCE3_TILE_K 64  /* H columns staged per step of the logit GEMM: 4 k-steps; rows of 128 bytes */
#define LCE3_SLAB_H 64  /* H columns of dx or dW updated per step: 4 fragments */
#define LCE3_PAIR 2 /* logit tiles whose G feeds one pass over the fp32 accumulator (halves its traffic) */
/* shared rows padded by 16 bytes (8 bf16, 4 floats): rows stay 32-byte aligned for WMMA at 16-row steps and
 * the same 16 bytes of 8 consecutive rows (what a fragment load reads at once) fall in 8 different bank
 * groups */
#define LCE3_PAD_BF16 8
#define LCE3_PAD_F32 4
/* threads per row in the row passes (4, one warp's quad) */
#define LCE3_ROW_LANES (LCE3_THREADS / LCE3_TILE_N)

/* cuda-v4 (kernels/linear_ce_v4.cu): the tiles its workspace is laid out by (optimized/
 * linear_ce_cuda_memory.c carves it); the rest of its geometry is the kernel file's own. */
#define LCE4_TILE_M 128  /* output rows of a block; G's filter flags and the partials: per [128, 128] */
#define LCE4_TILE_N 256  /* output columns of a block */
#define LCE4_VCHUNK 8192 /* vocabulary columns of backward's G buffer */
#define LCE4_GROUP 16    /* row tiles that sweep the columns together (lce4_block_tile) */

HD long long lce4_tiles(long long n) { return (n + LCE4_TILE_M - 1) / LCE4_TILE_M; }
HD long long lce4_tiles_n(long long n) { return (n + LCE4_TILE_N - 1) / LCE4_TILE_N; }
/* vocabulary columns of G: the chunk, or V rounded up to whole [.., 256] tiles if smaller */
HD long long lce4_chunk_cols(long long V)
{
    long long whole = lce4_tiles_n(V) * LCE4_TILE_N;
    return whole < LCE4_VCHUNK ? whole : LCE4_VCHUNK;
}

/* The block order of a grid of tiles_m x tiles_n output tiles: groups of LCE4_GROUP row tiles, and inside a
 * group consecutive blocks take consecutive row tiles of one column tile, so a wave shares its column tiles
 * and the group's row tiles stay in L2 while the columns stream past. */
HD void lce4_block_tile(long long b, long long tiles_m, long long tiles_n, long long *tm, long long *tn)
{
    long long per_group = (long long)LCE4_GROUP * tiles_n, first = b / per_group * LCE4_GROUP;
    long long rows = tiles_m - first < LCE4_GROUP ? tiles_m - first : LCE4_GROUP, r = b % per_group;
    *tm = first + r % rows;
    *tn = r / rows;
}

#ifdef __cplusplus
/* ---- device code shared by the versions (.cu only) ----------------------------------------------------- */

/* The warp step of a row logsumexp (v1's row kernel, v2's kernels): each lane's (running max, rescaled sum)
 * pair is merged down the warp with shuffles, lce_lse_merge doing the rescaling. Lane 0 ends with the
 * warp's. */
static __device__ inline lce_lse_acc lce_warp_lse(lce_lse_acc a)
{
    for (int off = LCE_WARP / 2; off > 0; off /= 2) {
        lce_lse_acc b;
        b.m = __shfl_down_sync(0xffffffffu, a.m, off);
        b.s = __shfl_down_sync(0xffffffffu, a.s, off);
        a = lce_lse_merge(a, b);
    }
    return a;
}

/* ---- the small reductions every CUDA version calls (kernels/linear_ce_v1.cu); device pointers, each
 * launch checked. */
#include <stdint.h>
#include "linear_ce_problem.h"

/* scale (1,) = 1 / (rows of target (N,) not LCE_IGNORE), 0 if none */
void lce_launch_mean_scale(long long N, const int32_t *target, float *scale);
/* loss (1,) = scale * sum of row_loss (N,), summed in double */
void lce_launch_loss(long long N, const float *row_loss, const float *scale, float *loss);
#endif

#endif
