/* maxsim.h - lesson 3, MaxSim: the problem, the math every version shares (__host__ __device__), and each
 * implementation's entry points and memory formulas. C and nvcc both compile it.
 *
 *   a     [I, J, K]   I queries of J token embeddings each (the forum's first tensor)
 *   b     [M, N, K]   M documents of N token embeddings each (the second tensor)
 *   out   [I, M]      out[i, m] = sum_j max_n <a[i, j, :], b[m, n, :]>
 *   dout  [I, M]      upstream gradient; the loss is sum(out * dout), so dL/dout = dout
 *   da    [I, J, K]   da[i, j, :] = sum_m dout[i, m] * b[m, arg[i, j, m], :]        (a gather)
 *   db    [M, N, K]   db[m, n, :] = sum over (i, j) with arg[i, j, m] == n of dout[i, m] * a[i, j, :]  (a
 *         scatter)
 *   arg   [I, J, M]   the argmax over n; among equal maxima the LOWEST n wins (ms_better below)
 *
 * torch.einsum('ijk,mnk->ijmn', a, b).max(-1).values.sum(1) first builds scores [I, J, M, N]. The forum's
 * sizes, I=300, J=2000, M=315, N=1990, K=256, make that 3.76e11 floats: 1.37 TiB before autograd keeps
 * anything.
 *
 * Rows: a viewed as [I*J, K] (row r = i*J + j) and b as [M*N, K] (row c = m*N + n) make the einsum one GEMM,
 * scores[I*J, M*N] = a . b^T, whose row-major layout IS [I, J, M, N]. Every implementation indexes this way.
 *
 * In this order: the problem; the max rule and the arithmetic the CPU and the kernels share (HD); the tile
 * sizes; naive (naive/maxsim_einsum.c); cpu (optimized/maxsim_fused.c); the CUDA versions
 * (kernels/maxsim_vN.cu), with their device memory formula and fit checks as plain C, for --predict; the
 * lesson's tensors, options and problem (lessons/lesson3.c and its tests).
 */
#ifndef KERNELS_MAXSIM_H
#define KERNELS_MAXSIM_H

#include <stddef.h>
#include <stdint.h>
#include "runtime/hd.h"
#include "runtime/mem_formula.h"
#include "runtime/size_math.h"

/* ---- the problem --------------------------------------------------------------------------------------- */
typedef struct {
    size_t I, J, M, N, K;
} ms_dims;

/* Tracker labels of the output and the gradients, the same in naive and cpu (the tables compare them by
 * label). */
#define MS_LABEL_OUT "out [I,M] f32"
#define MS_LABEL_DA "da [I,J,K] f32"
#define MS_LABEL_DB "db [M,N,K] f32"

static inline size_t ms_max_size(size_t x, size_t y) { return x > y ? x : y; } /* peaks: the larger phase */

/* Element counts; saturate at SIZE_MAX on overflow (size_math.h). */
static inline size_t ms_rows(const ms_dims *d) { return size_mul(d->I, d->J); }      /* rows of a: (i, j) */
static inline size_t ms_cols(const ms_dims *d) { return size_mul(d->M, d->N); }      /* rows of b: (m, n) */
static inline size_t ms_a_count(const ms_dims *d) { return size_mul(ms_rows(d), d->K); }
static inline size_t ms_b_count(const ms_dims *d) { return size_mul(ms_cols(d), d->K); }
static inline size_t ms_out_count(const ms_dims *d) { return size_mul(d->I, d->M); }
static inline size_t ms_arg_count(const ms_dims *d) { return size_mul(ms_rows(d), d->M); } /* [I, J, M] */
static inline size_t ms_scores_count(const ms_dims *d) { return size_mul(ms_rows(d), ms_cols(d)); }
/* Multiply-adds of the score GEMM (every implementation computes every score once per pass). */
static inline double ms_gemm_fmas(const ms_dims *d)
{
    return (double)d->I * (double)d->J * (double)d->M * (double)d->N * (double)d->K;
}

/* ---- the max rule and the arithmetic, shared by the CPU and the kernels ---------------------------------
 * The max rule lives here, once (ms_better), and every implementation -- naive, cpu, every CUDA version and
 * the float64 reference -- picks its argmax through it. It is PyTorch's rule for max(dim) (checked with torch
 * 1.13 on this machine: x.max(-1) of [1, nan, 3, nan] is (nan, 1); of [inf, 2, inf, nan] is (nan, 3); of four
 * -inf is (-inf, 0)):
 *   - a NaN score wins over any number, so NaN propagates to out with its index; among NaNs the lowest n;
 *   - among equal maxima (+-Inf included) the lowest n wins.
 * It is a total order on (value, n) -- NaN above everything -- so merging partial results in any order gives
 * the same winner, and a running best may start from (-Inf, 0): column 0 is real and its own candidate is
 * never below that seed. PyTorch's CUDA max does not promise which index it returns among ties; this does. */

/* 1 when score v at column n beats the running best bv at column bn. double, so the float64 reference calls
 * the same function; float scores convert exactly. (x != x) is isnan without <math.h> on either side. */
HD int ms_better(double v, long long n, double bv, long long bn)
{
    int vnan = v != v, bnan = bv != bv;
    if (vnan || bnan) return vnan && (!bnan || n < bn);
    return v > bv || (v == bv && n < bn);
}

/* The kernels' inner loops: a score plainly below the best (no NaN on either side) is decided by one float
 * compare; anything else goes to the rule. Same answers as ms_better, without a float-to-double conversion
 * per score on the GPU. */
HD int ms_better_f(float v, int n, float bv, int bn) { return !(v < bv) && ms_better(v, n, bv, bn); }

/* ms_better for a score v whose column is above the running best's (bv): a fold that visits a row's columns
 * in increasing order (cuda-v4, v5) decides by the values alone -- a greater number, or a NaN over a number,
 * wins; a tie keeps the lower column. One compare true for NaN (!(v <= bv)), one false for it (bv == bv). */
HD int ms_later_wins(float v, float bv) { return !(v <= bv) & (bv == bv); } /* & : no branch */

/* <x, y> over K, accumulated in float in the order k = 0 .. K-1 (cuda-v1 and the CPU's tail loops). */
HD float ms_dot(const float *x, const float *y, long long K)
{
    float s = 0.0f;
    for (long long k = 0; k < K; k++) {
        s += x[k] * y[k];
    }
    return s;
}

/* g[0..K) += w * x[0..K): one term of the gather (da) or the scatter (db). */
HD void ms_axpy(float w, const float *x, float *g, long long K)
{
    for (long long k = 0; k < K; k++) g[k] += w * x[k];
}

/* ---- tile sizes, read by the CUDA code and by the C side (the fit check and the memory formulas) ------- */
/* CPU (optimized/maxsim_fused.c): one scores tile is MS_CPU_ROWS rows of a (pairs (i, j)) against up to
 * MS_CPU_COLS rows of b (pairs (m, n)): 256 x 512 floats = 512 KiB, the only trace of the 4-D tensor. */
#define MS_CPU_ROWS 256
#define MS_CPU_COLS 512

/* CUDA tiled kernel (kernels/maxsim_v2.cu): one block per (i, m) computes the [J, N] slab
 * a[i] . b[m]^T in MS_TJ x MS_TN tiles, MS_TK columns of K at a time through shared memory; each thread owns
 * an MS_RJ x MS_RN register tile. */
#define MS_TJ 64
#define MS_TN 64
#define MS_TK 16
#define MS_RJ 4
#define MS_RN 4
#define MS_THREADS ((MS_TJ / MS_RJ) * (MS_TN / MS_RN)) /* 256 */

/* CUDA tensor-core kernel (kernels/maxsim_v3.cu): one block of 4 warps per (i, m) computes the [J, N]
 * slab in MS3_TJ x MS3_TN score tiles, K in steps of MS3_TK staged in shared memory rows padded by MS3_PAD
 * floats; each warp owns a 32 x 32 quarter of the tile as 2 x 2 WMMA m16n16k8 fragments. */
#define MS3_TJ 64
#define MS3_TN 64
#define MS3_TK 32
#define MS3_PAD 4
#define MS3_THREADS 128

/* cuda-v1 and the backward kernels: threads per block. */
#define MS_SIMPLE_THREADS 128
/* --deterministic's scan: threads per block (one block per m). The scatter: one warp per m, 8 warps per
 * block, so a block's 8 warps read arg[r, m0 .. m0+8) (32 bytes, one sector when M % 8 == 0) of one row. */
#define MS_SCAN_THREADS 256
#define MS_SCATTER_WARPS 8

#ifdef __cplusplus
extern "C" {
#endif

/* ---- naive (naive/maxsim_einsum.c): the forum's einsum, max and sum in C, with autograd's backward -------
 * Forward, op by op, and what each op leaves alive:
 *   scores = einsum(...)        [I, J, M, N] f32   one GEMM, a [I*J, K] . b[M*N, K]^T; a temporary
 *   values, indices = max(-1)   [I, J, M] f32, [I, J, M] int64; MaxBackward saves the int64 indices
 *   out = values.sum(1)         [I, M] f32; SumBackward saves only a shape
 * scores dies when max returns (no backward needs it: einsum's saves a and b, which the caller holds anyway),
 * values when sum returns. What stays until backward: the int64 indices (8 bytes per (i, j, m)).
 * Backward, node by node:
 *   SumBackward  dout [I, M] expanded over J: a view, no memory
 *   MaxBackward  dscores = zeros [I, J, M, N] f32, dout scattered at the indices; then the indices are freed
 *   BmmBackward  da = dscores . b (GEMM over M*N), db = dscores^T . a (GEMM over I*J); then dscores is freed
 * so the backward re-creates a full-size 4-D tensor even though only one element in N is non-zero. */
typedef struct {
    int64_t *idx; /* [I, J, M] max(-1).indices, int64 as torch returns them */
} naive_ms_saved;

/* Allocates and returns out [I, M]; fills saved. a [I, J, K], b [M, N, K]. */
float *naive_ms_forward(const ms_dims *d, const float *a, const float *b, naive_ms_saved *saved);
/* Allocates *da [I, J, K] and *db [M, N, K] from dout [I, M]; frees what forward saved. */
void naive_ms_backward(const ms_dims *d, const float *a, const float *b, naive_ms_saved *saved,
                       const float *dout, float **da, float **db);
/* Exact bytes, inputs a, b and the upstream dout included (derivation in docs/lesson-3.md). */
mem_formula naive_ms_memory(const ms_dims *d);

/* ---- cpu (optimized/maxsim_fused.c): the max over n fused into the GEMM, the 4-D tensor never exists ----
 * Tiles of rows of a (pairs (i, j)) against blocks of rows of b (pairs (m, n)). Each tile's scores
 * [rows, cols] are computed by a small GEMM into one reused scratch buffer and reduced at once to a running
 * max and argmax per (i, j, m); out[i, m] accumulates the maxima over j. What is kept for backward:
 *   saved mode      arg [I, J, M] int32 (4 bytes per (i, j, m), half of torch's int64 indices)
 *   --recompute     nothing: backward runs the same tiles again to find the argmax (the checkpointing
 *                   answer to the forum's question, without ever holding a chunk's 4-D slab either)
 * Backward needs only the argmax: da by a gather, db by a scatter-add (the problem above). Both modes walk
 * the tiles in the same order and add the same terms in the same order, so recompute and saved give
 * bitwise-equal gradients (a test asserts it). */
typedef struct {
    int32_t *arg;  /* [I, J, M] argmax over n, or NULL when recompute */
    int recompute;
} cpu_ms_saved;

/* Allocates and returns out [I, M]; a [I, J, K], b [M, N, K]. recompute: keep nothing for backward. */
float *cpu_ms_forward(const ms_dims *d, const float *a, const float *b, int recompute, cpu_ms_saved *saved);
/* Allocates *da [I, J, K], *db [M, N, K] from dout [I, M]; frees what forward saved. */
void cpu_ms_backward(const ms_dims *d, const float *a, const float *b, cpu_ms_saved *saved, const float *dout,
                     float **da, float **db);
mem_formula cpu_ms_memory(const ms_dims *d, int recompute);
/* Bytes of the one scratch block (scores tile, running max and argmax). */
size_t cpu_ms_scratch_bytes(const ms_dims *d);
/* Multiply-adds of forward + backward (the session's time estimate divides it by the measured GEMM rate). */
double cpu_ms_work(const ms_dims *d, int recompute);

/* ---- the CUDA versions (kernels/maxsim_vN.cu) -------------------------------------------------------------
 * Pointers are device pointers: a [I,J,K], b [M,N,K]. Forward allocates and returns out [I,M] and, unless
 * recompute, saves the int32 argmax [I,J,M]; backward allocates *da [I,J,K] and *db [M,N,K] from dout [I,M]
 * (db by atomics, or by buckets when deterministic) and frees the argmax. */
typedef struct {
    int32_t *arg; /* [I, J, M] on the device, or NULL when recompute */
    int recompute, deterministic, f16; /* f16: cuda-v5's and v6's operands fp16, not bf16 */
} cuda_ms_saved;

float *ms1_forward(const ms_dims *d, const float *a, const float *b, int recompute, int deterministic,
                   cuda_ms_saved *s);
void ms1_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s, const float *dout,
                  float **da, float **db);
/* v1's gradients from the argmax arg [I,J,M] (freed here): the backward of every version */
void ms1_grads(const ms_dims *d, const float *a, const float *b, int deterministic, int *arg,
               const float *dout, float **da, float **db);
float *ms2_forward(const ms_dims *d, const float *a, const float *b, int recompute, int deterministic,
                   cuda_ms_saved *s);
void ms2_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s, const float *dout,
                  float **da, float **db);
float *ms3_forward(const ms_dims *d, const float *a, const float *b, int recompute, int deterministic,
                   cuda_ms_saved *s);
void ms3_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s, const float *dout,
                  float **da, float **db);
float *ms4_forward(const ms_dims *d, const float *a, const float *b, int recompute, int deterministic,
                   cuda_ms_saved *s);
void ms4_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s, const float *dout,
                  float **da, float **db);
/* f16: the operands rounded to fp16, else bf16 */
float *ms5_forward(const ms_dims *d, const float *a, const float *b, int recompute, int deterministic,
                   int f16, cuda_ms_saved *s);
void ms5_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s, const float *dout,
                  float **da, float **db);
/* cuda-v6: v5 on wgmma and the TMA (sm_90a), the same arguments */
float *ms6_forward(const ms_dims *d, const float *a, const float *b, int recompute, int deterministic,
                   int f16, cuda_ms_saved *s);
void ms6_backward(const ms_dims *d, const float *a, const float *b, cuda_ms_saved *s, const float *dout,
                  float **da, float **db);
/* cuda-v4, v5, v6 (CUDA builds only): K <= 256 and the launch within the device's limits (cuda_fit.h); v6
 * also compute capability 9.0 */
const char *ms4_unfit(const ms_dims *d);
const char *ms5_unfit(const ms_dims *d);
const char *ms6_unfit(const ms_dims *d);

/* Device bytes of every version (no cuBLAS: the kernels are our own); staged16: cuda-v5's and v6's 16-bit
 * copies of a and b. Plain C here, not in a .cu file: a CPU-only build prints and tests it (--predict). */
static inline mem_formula cuda_ms_memory(const ms_dims *d, int recompute, int deterministic, int staged16)
{
    size_t a4 = size_mul(ms_a_count(d), 4), b4 = size_mul(ms_b_count(d), 4); /* bytes of float32 tensors */
    size_t out4 = size_mul(ms_out_count(d), 4), arg4 = size_mul(ms_arg_count(d), 4);
    /* cuda-v5, v6: a and b as 16-bit rows of K rounded up to 8 columns, held while a forward kernel runs */
    size_t K8 = (d->K + 7) / 8 * 8,
           s16 = staged16 ? size_mul(size_add(ms_rows(d), ms_cols(d)), size_mul(K8, 2)) : 0;
    size_t live = size_add(size_add(a4, b4), size_add(out4, recompute ? 0 : arg4));
    size_t fwd = size_add(live, s16);
    size_t bwd = size_add(size_add(live, out4), size_add(a4, b4)); /* + dout, da, db */
    size_t allocs = 7 + (staged16 ? 2 : 0);                         /* a b | out arg (a16 b16) | dout da db */
    /* arg recomputed into a transient buffer */
    if (recompute) {
        bwd = size_add(bwd, arg4);
        /* the recompute's 16-bit copies */
        fwd = ms_max_size(fwd, size_add(size_add(live, out4), size_add(arg4, s16)));
        allocs += staged16 ? 2 : 0;
    }
    if (deterministic) {
        /* buckets: per m, the rows (i, j) sorted by their argmax n, and where each n's bucket starts */
        size_t list = size_mul(ms_arg_count(d), 4), start = size_mul(size_mul(d->M, d->N + 1), 4);
        bwd = size_add(bwd, size_add(list, start));
        allocs += 2;
    }
    mem_formula f = {ms_max_size(bwd, fwd), live, allocs};
    return f;
}

/* NULL when the problem fits the kernels' int32 argmax and grid limits, else why not (the fit checks that
 * need no device; each version's cuda_fit check in its .cu file holds the device's own limits). */
static inline const char *cuda_ms_unfit(const ms_dims *d)
{
    if (d->N > INT32_MAX) return "N above 2^31-1 does not fit the int32 argmax";
    if (size_mul(d->I, d->M) > (size_t)INT32_MAX)
        return "I*M above 2^31-1 blocks does not fit one grid dimension";
    if (ms_rows(d) > (size_t)INT32_MAX) return "I*J above 2^31-1 rows does not fit the int32 bucket lists";
    if (ms_arg_count(d) / MS_SIMPLE_THREADS >= (size_t)INT32_MAX)
        return "I*J*M above 2^31-1 blocks of --deterministic's histogram does not fit one grid dimension";
    if (ms_cols(d) > (size_t)INT32_MAX)
        return "M*N above 2^31-1 rows of b does not fit int row indices (--deterministic: one block per (m, "
               "n))";
    return NULL;
}

/* cuda-v4 and v5: cuda_ms_unfit, and K <= 256 (a[i]'s resident rows of K beside the pipeline). */
static inline const char *cuda_ms4_unfit(const ms_dims *d)
{
    const char *why = cuda_ms_unfit(d);
    if (why) return why;
    if (d->K > 256)
        return "K above 256: cuda-v4 keeps a[i]'s 64 rows of K floats in shared memory beside the pipeline "
               "(cuda-v3 runs any K)";
    return NULL;
}

#ifdef __cplusplus
}
#endif

/* ---- the lesson (lessons/lesson3.c) and its tests: tensors, options, the problem a run sees; C only ----
 * The naming rule of every lesson: the problem is <name>_problem (the dimensions d, then the options), read
 * by lessonN.c through prob_of() and dims_of(). */
#ifndef __cplusplus
/* lesson3_def.tensors and .opts, in this order */
enum { MS_A, MS_B, MS_DOUT, MS_OUT, MS_DA, MS_DB };
enum { MS_OPT_RECOMPUTE, MS_OPT_DETERMINISTIC, MS_OPT_PRECISION };
/* --precision's names: cuda-v5's and v6's 16-bit operand type */
enum { MS_BF16, MS_FP16 };
typedef struct {
    ms_dims d;
    int recompute, deterministic, precision;
} ms_problem;
struct lesson; /* lessons/runner/lesson.h */
extern const struct lesson lesson3_def;
#endif

#endif
