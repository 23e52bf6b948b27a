/* linear_ce_problem.h - lesson 5's problem: a linear layer followed by cross-entropy, fused and chunked.
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
#ifndef KERNELS_LINEAR_CE_PROBLEM_H
#define KERNELS_LINEAR_CE_PROBLEM_H

#include <stddef.h>
#include <stdint.h>
#include "runtime/size_math.h"

#define LCE_IGNORE (-100) /* PyTorch's default ignore_index */

/* W is converted to float32 for the CPU GEMMs LCE_VPANEL rows at a time (see optimized/linear_ce_fused.c), so
 * the CPU's conversion scratch is (LCE_VPANEL, H) floats, never (V, H). */
#define LCE_VPANEL 256

typedef struct {
    size_t N, H, V;
    size_t chunk; /* rows per chunk, resolved (1 <= chunk <= N) */
    /* rows per chunk of `cuda` (optimized/linear_ce_fused.cu): --chunk when given, else the chunk its traffic
     * model picks (lce_model_chunk, optimized/linear_ce_cuda.h); 0 means "the same as chunk" */
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

#endif
