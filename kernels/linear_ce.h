/* linear_ce.h - lesson 5, linear cross-entropy: the problem, the math every version shares (HD: the CPU code
 * and the kernels call the same functions), and each implementation's entry points, layouts and memory
 * formulas: naive (naive/linear_ce_chunked.c), cpu (optimized/linear_ce_fused.c), cuda-v1..v5
 * (kernels/linear_ce_vN.cu; their layouts and formulas in optimized/linear_ce_cuda_memory.c, plain C, so the
 * driver predicts them without nvcc). Compiles as C and under nvcc; the entry points are extern "C".
 */
#ifndef KERNELS_LINEAR_CE_H
#define KERNELS_LINEAR_CE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "runtime/bf16.h"
#include "runtime/hd.h"
#include "runtime/mem_formula.h"
#include "runtime/size_math.h"

/* ==== the problem: a linear layer followed by cross-entropy, fused and chunked =============================
 *
 *   x       (N, H)  bf16   hidden states (the last layer's output, one row per token)
 *   W       (V, H)  bf16   the vocabulary projection (lm_head)
 *   target  (N,)    int32  the next token of each row; LCE_IGNORE (-100) rows do not count
 *   loss    (1,)    f32    mean over the counted rows of  logsumexp_v(z[n, :]) - z[n, target[n]],  z = x W^T
 *   dloss   (1,)    f32    upstream gradient of the loss
 *   dx      (N, H)  bf16   dloss * g W        g[n, v] = (softmax(z[n])[v] - [v == target[n]]) / n_valid
 *   dW      (V, H)  f32    dloss * g^T x      (0 for ignored rows)
 *
 * The fused approach never holds the (N, V) logits: it takes `chunk` rows at a time, computes their logits,
 * turns them into the gradient in place and folds the chunk into dx and dW at once. The seed's code (Liger
 * Kernel's fused_linear_cross_entropy_forward) picks the chunk from the ratio V/H, so that a chunk's logits
 * are about the size of x itself:
 *     chunk = next_power_of_two(ceil(N / ceil(V / H)))
 * e.g. N=8192, H=4096, V=128256: ceil(V/H) = 32, chunk = 256, 32 chunks.
 */
#define LCE_IGNORE (-100) /* PyTorch's default ignore_index */

/* W is converted to float32 for the CPU GEMMs LCE_VPANEL rows at a time (the CPU GEMMs below), so the CPU's
 * conversion scratch is (LCE_VPANEL, H) floats, never (V, H). */
#define LCE_VPANEL 256

typedef struct {
    size_t N, H, V;
    size_t chunk; /* rows per chunk, resolved (1 <= chunk <= N) */
    /* rows per chunk of cuda-v1: --chunk when given, else the chunk its traffic model picks (lce_model_chunk,
     * below); 0 means "the same as chunk" */
    size_t cuda_chunk;
} lce_dims;

static inline size_t lce_x_count(const lce_dims *d) { return size_mul(d->N, d->H); }
static inline size_t lce_w_count(const lce_dims *d) { return size_mul(d->V, d->H); }
static inline size_t lce_chunks(const lce_dims *d) { return (d->N + d->chunk - 1) / d->chunk; }
/* Bytes every implementation holds: the inputs x (N,H) bf16, W (V,H) bf16, target (N) int32, and the
 * gradients dx (N,H) bf16 and dW (V,H) f32. The memory formulas add their own temporaries to these. */
static inline size_t lce_input_bytes(const lce_dims *d)
{
    return size_add(size_add(size_mul(2, lce_x_count(d)), size_mul(2, lce_w_count(d))), size_mul(4, d->N));
}
static inline size_t lce_grad_bytes(const lce_dims *d)
{
    return size_add(size_mul(4, lce_w_count(d)), size_mul(2, lce_x_count(d)));
}
/* rows of chunk k (the last one may be short) */
static inline size_t lce_chunk_rows(const lce_dims *d, size_t k)
{
    size_t start = k * d->chunk;
    return d->N - start < d->chunk ? d->N - start : d->chunk;
}
/* V rows of a conversion panel: LCE_VPANEL, or V if smaller */
static inline size_t lce_vpanel(const lce_dims *d) { return d->V < LCE_VPANEL ? d->V : LCE_VPANEL; }

/* The seed's chunk rule: next power of two of ceil(N / ceil(V / H)), at most the power of two >= N. */
static inline size_t lce_default_chunk(size_t N, size_t H, size_t V)
{
    size_t inc = (V + H - 1) / H;
    size_t want = (N + inc - 1) / inc, c = 1;
    while (c < want) c *= 2;
    return c;
}

/* ==== the math of one row, shared by the CPU code and the kernels (HD) =====================================
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

/* lce_lse_merge that keeps a NaN sum where both maxima are -inf (lce_lse_merge returns a alone): the tile
 * merges of cuda-v4 and v5, where a NaN row's partial must reach its lse */
HD lce_lse_acc lce_lse_merge_keep_nan(lce_lse_acc a, lce_lse_acc b)
{
    if (a.m == -INFINITY && b.m == -INFINITY) {
        a.s += b.s;
        return a;
    }
    return lce_lse_merge(a, b);
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
 *             over the rows of x in tiles of LCE2_TILE_N; the g tile [LCE2_TILE_N, LCE2_TILE_V] lives in
 *             shared memory */
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
extern "C" {
#endif
#include "arena.h" /* a C header without its own extern "C" */

/* ==== naive (naive/linear_ce_chunked.c): the seed's chunk loop, temporaries included =======================
 *
 * What Liger Kernel's fused_linear_cross_entropy_forward does, line by line, with each tensor it creates:
 *     grad_weight = zeros (V, H) f32        the accumulator; saved for backward
 *     grad_input  = zeros (N, H) bf16       saved for backward
 *     loss_1d     = zeros (N,) f32          one loss per row
 *     for each chunk of rows:
 *         logits_chunk = x_chunk @ W^T                   (chunk, V) bf16, a new tensor
 *         cross_entropy_kernel(logits_chunk, ...)        gradient written over the logits, in bf16
 *         grad_input[chunk] = logits_chunk @ W           (chunk, H) bf16 product, then copied
 *         grad_weight += mm(logits_chunk^T, x_chunk).float()
 *                                     mm:     (V, H) bf16 product    V*H*2 bytes, pass 1 over (V, H)
 *                                     .float(): (V, H) f32 copy      V*H*4 bytes, pass 2
 *                                     +=:     read both, write       pass 3
 *     loss = sum(loss_1d)
 * and backward only multiplies the saved gradients by dloss, in place. The bf16 product is freed once the
 * .float() copy exists (Python drops the temporary after the call), so both are alive together during the
 * cast: V*H*6 bytes on top of everything else. Its bf16 GEMMs are the CPU's below (lce_logits_panel, ...).
 */
typedef struct {
    float *grad_weight; /* (V, H) f32: dloss-free dW, accumulated over the chunks */
    bf16 *grad_input;   /* (N, H) bf16: dloss-free dx */
} naive_lce_saved;

/* Allocates and returns loss (1,) f32; fills saved. x (N, H) bf16, W (V, H) bf16, target (N,) int32 in [0, V)
 * or LCE_IGNORE. */
float *naive_lce_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                         naive_lce_saved *saved);
/* Scales the saved gradients by dloss (1,) in place and hands them over: *dx (N, H) bf16, *dW (V, H) f32. */
void naive_lce_backward(const lce_dims *d, naive_lce_saved *saved, const float *dloss, bf16 **dx, float **dW);
/* Bytes of the float32 conversion scratch (one tracked block, chunk-sized). */
size_t naive_lce_scratch_bytes(const lce_dims *d);
/* Exact bytes and allocation count, inputs (x, W, target) and dloss included; docs/lesson-5.md derives it. */
mem_formula naive_lce_memory(const lce_dims *d);

/* ==== cpu (optimized/linear_ce_fused.c): the same chunk loop with no (V, H) temporary ======================
 *
 * Per chunk of rows:
 *     logits (chunk, V) f32   = x_chunk . W^T          a GEMM with a float32 output (bf16 operands)
 *     one pass per row over the logits: online logsumexp, the row's loss, then the gradient written over the
 *     row in bf16 (row r's bf16 gradient occupies the first half of its own f32 row: row stride 2V elements)
 *     grad_input[chunk] (chunk, H) = g . W             f32 accumulation, rounded once to bf16
 *     grad_weight (V, H) f32  = 1 * grad_weight + g^T . x_chunk      beta = 1: accumulated in place
 * so the weight gradient is one pass over (V, H) per chunk and no chunk's contribution is rounded to bf16
 * before it is added. What stays allocated: grad_weight (V, H) f32, grad_input (N, H) bf16 (saved for
 * backward, as in the seed) and one chunk-sized workspace. Backward multiplies both by dloss in place.
 */
typedef struct {
    float *grad_weight; /* (V, H) f32 */
    bf16 *grad_input;   /* (N, H) bf16 */
} fused_lce_saved;

/* The CPU version runs k of the seed's chunks at once, k = ceil(LCE_CPU_GEMM_ROWS / chunk) (1 when the chunk
 * is already that large, as at the seed's size: chunk 256): a GEMM whose output is the (V, H) weight gradient
 * reads and writes all of it for every block of rows: 16-row chunks (medium) would pay that pass every 16
 * rows, a block of 128 rows pays it every 128. The logits buffer grows to (block, V) f32 for it; the memory
 * formula counts it. Rows are independent, so the results are the same up to the order of the float32
 * additions over rows inside the dW GEMM. */
#define LCE_CPU_GEMM_ROWS 128
size_t cpu_lce_block_rows(const lce_dims *d); /* rows per block: k * chunk, at most N */
/* Allocates and returns loss (1,) f32; fills saved. x (N, H) bf16, W (V, H) bf16, target (N,) int32. */
float *cpu_lce_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                       fused_lce_saved *saved);
/* Scales the saved gradients by dloss (1,) in place: *dx (N, H) bf16, *dW (V, H) f32. */
void cpu_lce_backward(const lce_dims *d, fused_lce_saved *saved, const float *dloss, bf16 **dx, float **dW);
size_t cpu_lce_workspace_bytes(const lce_dims *d);
mem_formula cpu_lce_memory(const lce_dims *d);

/* ---- the CPU's bf16 GEMMs (naive's and cpu's), one panel of W's rows at a time -------------------------
 * On a GPU, cublasGemmEx reads bf16 operands and multiplies them on tensor cores with float32 accumulation;
 * the seed's PyTorch does the same on the CPU through oneDNN's bf16 matmul. Where the CPU has bf16
 * dot-product instructions (AVX512_BF16; gemm_cpu_bf16_native()), the products here are that very call on the
 * bf16 tensors in place. Elsewhere each product converts its bf16 operands to float32 (exactly: a bf16 value
 * is a float32 with the low 16 bits zero) and runs sgemm_cpu, which also accumulates in float32. Either way
 * the product of two bf16 values is exact in float32 and the sums are float32 ones: the numbers differ from
 * the GPU's only in the order of the additions inside the reduction (and, on the bf16 instructions, in
 * flushing float32 subnormals, below 2^-126, to zero).
 *
 * Converting all of W (V, H) to float32 would be a (V, H) f32 temporary, the very thing lesson 5 removes, so
 * W is converted LCE_VPANEL rows at a time into a panel the caller owns, (vb, H). The vocabulary index v of
 * every product below lies in the panel [v0, v0 + vb). The float32 scratch is allocated on both paths (the
 * memory formulas are one), and only written on the float32 one.
 *
 * Layouts (row-major): x (rows, H) bf16 and xf its f32 copy; W (V, H) bf16; g (rows, V) bf16 with row stride
 * ldg elements; gp (rows, vb) f32; wp (vb, H) f32. */

/* dst (rows, cols) bf16  <-  src (rows, cols) f32, row strides ldd and lds, rounded to nearest even. */
void lce_f32_to_bf16(bf16 *dst, size_t ldd, const float *src, size_t lds, size_t rows, size_t cols);

/* One block's operands for the panel products: the bf16 tensors and their float32 scratch copies. */
typedef struct {
    const bf16 *x;  /* (rows, H) the block's inputs */
    float *xf;      /* (rows, H) their f32 copy (lce_x_block) */
    const bf16 *W;  /* (V, H) */
    const bf16 *g;  /* (rows, V) the block's bf16 gradient, row stride ldg; NULL before the row pass */
    size_t ldg;
    float *gp, *wp; /* (rows, vb), (vb, H) f32 copies of a panel's g and W */
    size_t rows, H;
} lce_operands;

/* xf <- x, where the products run in float32 (nothing to do on the bf16 instructions). */
void lce_x_block(const lce_operands *o);
/* out[:, 0:vb] (rows, vb) f32, row stride ldo = x (rows, H) . W[v0:v0+vb, :]^T. */
void lce_logits_panel(const lce_operands *o, size_t v0, size_t vb, float *out, size_t ldo);
/* gp (rows, vb) <- g[:, v0:v0+vb] and, with_w, wp (vb, H) <- W[v0:v0+vb, :], where the products run in
 * float32. */
void lce_grad_panel(const lce_operands *o, size_t v0, size_t vb, int with_w);
/* dxc (rows, H) f32 = beta * dxc + g[:, v0:v0+vb] (rows, vb) . W[v0:v0+vb, :] (vb, H): the panel's share of
 * the input gradient. */
void lce_dx_panel(const lce_operands *o, size_t v0, size_t vb, float beta, float *dxc);
/* out (vb, H) f32, row stride H = beta * out + g[:, v0:v0+vb]^T (vb, rows) . x (rows, H): the panel's rows of
 * the weight gradient. beta = 1 accumulates into out in place. */
void lce_dw_panel(const lce_operands *o, size_t v0, size_t vb, float beta, float *out);

/* 1 / (rows whose target is not LCE_IGNORE): the mean's scale, folded into every gradient element; 0 when
 * every row is ignored (the loss and every gradient are then 0, as Liger's kernel gives; F.cross_entropy says
 * NaN). */
float lce_mean_scale(const int32_t *target, size_t N);
/* Backward of both CPU implementations, as Liger's: the gradients forward saved (dloss-free) are scaled by
 * the upstream dloss in place (grad_input stays bf16, so dx is rounded once more) and handed over as dx and
 * dW; the saved pointers are cleared. */
void lce_scale_saved_gradients(const lce_dims *d, float dloss, bf16 **grad_input, float **grad_weight,
                               bf16 **dx, float **dW);

/* ---- cpu's row pass over a block's float32 logits -------------------------------------------------------
 * Per row the logsumexp, the row's loss and the gradient scale * (softmax - onehot) written over the row as
 * bf16, vectorised for the instruction set the CPU reports (AVX-512F, else AVX2 with FMA, else plain C).
 * Every path gives the float64 reference's gradient within one bf16 rounding (u = 2^-8 relative) plus 1e-6,
 * and the loss within float32 sums (tests/test_lesson5.c checks each path this CPU can run). */
#define LCE_ROWS_ENV "LCE_CPU_ROWS" /* avx512, avx2 or c: that path (tests/gemm_paths.sh forces each) */

/* The one pass over a block's f32 logits z (rows, V): returns the sum of the counted rows' losses (not yet
 * divided by n_valid) and leaves row r's gradient as bf16 at (bf16 *)(z + r * V), i.e. row stride 2V. A row
 * whose target is LCE_IGNORE gets a zero gradient and adds nothing. */
double cpu_lce_rows(float *z, const int32_t *target, size_t rows, size_t V, float scale);
/* "avx512 (the widest this CPU has: ...)" or "avx2 (forced: LCE_CPU_ROWS)": for lesson 5's header. */
const char *cpu_lce_rows_about(void);
/* 1 when this CPU runs the path "avx512", "avx2" or "c"; use: every later pass takes it (0), or -1. */
int cpu_lce_rows_can(const char *name);
int cpu_lce_rows_use(const char *name);

/* ==== the CUDA versions as C sees them (kernels/linear_ce_vN.cu) ===========================================
 * Each version's entry points, its workspace layout, memory formula and size check (the last three in
 * optimized/linear_ce_cuda_memory.c). Pointers are device pointers; forward allocates and returns loss (1,)
 * f32 and fills the saved state, backward allocates (v2-v4) or hands over (v1) *dx (N, H) bf16 and
 * *dW (V, H) f32. */

/* what forward saves: the inputs by reference and each row's logsumexp (N,) f32 (0 for an ignored row) */
typedef struct {
    const bf16 *x;
    const bf16 *W;
    const int32_t *target;
    float *lse;
} lce_cuda_saved;

/* what --filter did in the last backward: the [128, 128] tiles of G and how many it skipped */
typedef struct {
    int filter;
    unsigned long long tiles;
    unsigned skipped;
} lce_filter_count;

/* ---- cuda-v1: cuBLAS GEMMs and a fused row kernel per chunk of rows (kernels/linear_ce_v1.cu) -----------
 * forward   grad_weight (V, H) f32 and grad_input (N, H) bf16 computed and kept; one workspace block:
 *           logits (chunk, V) f32 (row r's bf16 gradient written over its first half), row losses (N,),
 *           1/n_valid; cuBLAS's own workspace beside it
 * backward  both gradients times dloss in place, handed over as dx and dW */
typedef struct {
    float *grad_weight; /* (V, H) f32 */
    bf16 *grad_input;   /* (N, H) bf16 */
} lce1_saved;
float *lce1_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target, lce1_saved *s);
void lce1_backward(const lce_dims *d, lce1_saved *s, const float *dloss, bf16 **dx, float **dW);
typedef struct {
    /* (chunk, V) f32 logits; the row kernel writes row r's bf16 gradient over its first half */
    float *logits;
    float *row_loss; /* (N,) f32 each row's loss (0 for ignored rows), summed at the end */
    float *scale;    /* (1,) f32 1 / n_valid, counted on the device */
} lce1_workspace;
void lce1_carve(arena *a, const lce_dims *d, lce1_workspace *w);
size_t lce1_workspace_bytes(const lce_dims *d);
mem_formula lce1_memory(const lce_dims *d);
const char *lce1_unfit(const lce_dims *d); /* NULL when the sizes fit cuBLAS's int arguments and the grid */
/* d with chunk = d->cuda_chunk (when set): what v1, its workspace and its formula run with */
lce_dims lce_cuda_dims(const lce_dims *d);
/* cuda_track.h's CUBLAS_WORKSPACE_BYTES, restated so the C formula needs no CUDA header (a static_assert in
 * kernels/linear_ce_v1.cu holds them equal) */
#define CUBLAS_WORKSPACE_BYTES_C ((size_t)32 << 20)

/* v1's chunk, chosen by a model of its traffic. Per chunk of c rows the loop runs three GEMMs of 2 c V H
 * flops each and one row pass; each is timed as max(flops / F, bytes / B), a roofline:
 *     logits   reads W (2VH) and x_c (2cH), writes the f32 logits (4cV)
 *     row pass reads the logits (4cV), writes the bf16 gradient over them (2cV)
 *     dx       reads g (2cV) and W (2VH), writes dx_c (2cH)
 *     dW       reads g (2cV) and x_c (2cH), and reads + writes the f32 dW: 2 V H 4 bytes, whatever c is
 * The logits traffic sums to 14 N V bytes for any c; W's reads and dW's read-modify-write are paid once per
 * chunk, so small chunks multiply them. The choice: the smallest chunk (a power of two, or N) whose modeled
 * time is within LCE_CHUNK_SLACK of one chunk of all N rows. F and B: the dense bf16 tensor rate and the DRAM
 * bandwidth of the GPU the report targets (docs/lesson-5.md). */
#define LCE_MODEL_FLOPS 989e12  /* flop/s, bf16 tensor cores, dense */
#define LCE_MODEL_BYTES 3.35e12 /* byte/s, DRAM */
#define LCE_CHUNK_SLACK 0.05
typedef struct {
    double ms;           /* modeled time of the chunk loop (forward: logits, rows, dx, dW) */
    double bytes;        /* its DRAM traffic */
    double dw_rmw_bytes; /* of which dW's read-modify-write: chunks * 2 V H 4 */
    double logits_bytes; /* the logits buffer: c V 4 */
} lce_chunk_cost;
lce_chunk_cost lce_chunk_model(size_t N, size_t H, size_t V, size_t chunk);
size_t lce_model_chunk(size_t N, size_t H, size_t V);
void lce_print_chunk_choice(const lce_dims *d, FILE *f); /* the chosen chunk and the model's figures */

/* ---- cuda-v2: Cut Cross-Entropy, no logits buffer, scalar dots (kernels/linear_ce_v2.cu) ----------------
 * forward   lse (N,) saved; workspace: row losses (N,), 1/n_valid; freed before forward returns
 * backward  dx, dW and 1/n_valid recounted (1,); lse and it freed last */
float *lce2_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                    lce_cuda_saved *s);
void lce2_backward(const lce_dims *d, lce_cuda_saved *s, const float *dloss, bf16 **dx, float **dW);
typedef struct {
    float *row_loss; /* (N,) f32 each row's loss (0 for ignored rows), summed into the loss */
    float *scale;    /* (1,) f32 1 / n_valid */
} lce2_forward_workspace;
void lce2_carve_forward(arena *a, const lce_dims *d, lce2_forward_workspace *w);
mem_formula lce2_memory(const lce_dims *d);
const char *lce2_unfit(const lce_dims *d); /* int indexing, the grid, the dx kernel's shared memory */

/* ---- cuda-v3: Cut Cross-Entropy on WMMA tensor cores (kernels/linear_ce_v3.cu) --------------------------
 * forward   v2's: lse (N,) saved, the same workspace
 * backward  one workspace block: dx_acc (N, H) f32 (dx summed by the block owning the rows, rounded once),
 *           1/n_valid recounted, two skipped-tile counters; freed with lse before backward returns */
float *lce3_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                    lce_cuda_saved *s);
void lce3_backward(const lce_dims *d, int filter, lce_cuda_saved *s, const float *dloss, bf16 **dx,
                   float **dW);
typedef struct {
    float *dx_acc;     /* (N, H) f32 dx summed over V-tiles; rows owned by one block each */
    float *scale;      /* (1,) f32 1 / n_valid, recounted */
    unsigned *skipped; /* (2,) u32 tiles skipped by the filter: [0] in the dx kernel, [1] in the dW kernel */
} lce3_backward_workspace;
void lce3_carve_backward(arena *a, const lce_dims *d, lce3_backward_workspace *w);
mem_formula lce3_memory(const lce_dims *d);
const char *lce3_unfit(const lce_dims *d); /* int indices and tile loops */
/* what --filter did in the last lce3_backward: [32, 64] logit tiles per gradient kernel, those skipped */
typedef struct {
    int filter;
    unsigned long long tiles; /* ceil(N / 32) * ceil(V / 64) per kernel */
    unsigned skipped_dx, skipped_dw;
} lce3_filter_count;
lce3_filter_count lce3_last_filter(void);

/* ---- cuda-v4: mma.sync Cut Cross-Entropy (kernels/linear_ce_v4.cu) --------------------------------------
 * forward   lse (N,) saved; workspace: each (row, 128-column tile)'s partial (max, sum exp)
 *           (2, ceil(V / 128), N), z[target] (N,), row losses (N,), 1/n_valid; freed before forward returns
 * backward  per vocabulary chunk of ldg = min(8192, V rounded up to 256) columns: G (N, ldg) bf16,
 *           the filter's flags per [128, 128] tile and their compacted lists (kept vocabulary tiles
 *           per row tile, kept row tiles per vocabulary tile); dx_acc (N, H) f32 when V takes more
 *           than one chunk; 1/n_valid; a count of the tiles skipped */
float *lce4_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                    lce_cuda_saved *s);
void lce4_backward(const lce_dims *d, int filter, lce_cuda_saved *s, const float *dloss, bf16 **dx,
                   float **dW);
lce_filter_count lce4_last_filter(void);
const char *lce4_device_unfit(void); /* NULL when this GPU fits every launch (CUDA builds only) */

typedef struct {
    float *part;     /* (2, ceil(V / 128), N) f32: the tiles' maxima, then their sums of exp */
    float *z_target; /* (N,) f32 */
    float *row_loss; /* (N,) f32 */
    float *scale;    /* (1,) f32 */
} lce4_forward_workspace;
typedef struct {
    bf16 *G;           /* (N, ldg) bf16: (softmax - onehot) * dloss / n_valid of one chunk */
    int *skip;         /* (ceil(N / 128), ldg / 128) i32: 1 where the filter drops the tile */
    int *dx_tiles;     /* (ceil(N / 128), ldg / 128) i32: row tile i's kept vocabulary tiles, in order */
    int *dx_count;     /* (ceil(N / 128),) i32 */
    int *dw_tiles;     /* (ldg / 128, ceil(N / 128)) i32: vocabulary tile j's kept row tiles, in order */
    int *dw_count;     /* (ldg / 128,) i32 */
    float *dx_acc;     /* (N, H) f32 dx summed over the chunks; NULL with one chunk */
    float *scale;      /* (1,) f32 */
    unsigned *skipped; /* (1,) u32 */
} lce4_backward_workspace;
void lce4_carve_forward(arena *a, const lce_dims *d, lce4_forward_workspace *w);
void lce4_carve_backward(arena *a, const lce_dims *d, lce4_backward_workspace *w);
size_t lce4_chunks(const lce_dims *d);
mem_formula lce4_memory(const lce_dims *d);
const char *lce4_unfit(const lce_dims *d); /* NULL when the sizes fit the kernels' int arguments and grids */
/* v4's merge of the partials into lse and the row losses, and its kept tiles' lists (v5 calls them too) */
void lce4_launch_merge(int N, int V, const int32_t *target, const float *part, const float *z_target,
                       float *lse, float *row_loss);
void lce4_launch_lists(int tn, int tc, int ldt, const lce4_backward_workspace *w);

/* ---- cuda-v5: v4 on wgmma and the TMA, compute capability 9.0 only (kernels/linear_ce_v5.cu) ------------
 * v4's layouts, workspace and memory formula (lce4_memory), the same launches on other kernels */
float *lce5_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                    lce_cuda_saved *s);
void lce5_backward(const lce_dims *d, int filter, lce_cuda_saved *s, const float *dloss, bf16 **dx,
                   float **dW);
lce_filter_count lce5_last_filter(void);
const char *lce5_unfit(const lce_dims *d); /* v4's, and H % 8 == 0 (the TMA's 16-byte row stride) */
const char *lce5_device_unfit(void); /* NULL on compute capability 9.0 when this GPU fits every launch */

#ifdef __cplusplus
}

/* ==== device code shared by the versions (.cu only) ==================================================== */

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

/* The small reductions every CUDA version calls (kernels/linear_ce_v1.cu); device pointers, each launch
 * checked. */
/* scale (1,) = 1 / (rows of target (N,) not LCE_IGNORE), 0 if none */
void lce_launch_mean_scale(long long N, const int32_t *target, float *scale);
/* loss (1,) = scale * sum of row_loss (N,), summed in double */
void lce_launch_loss(long long N, const float *row_loss, const float *scale, float *loss);
#endif

#endif
