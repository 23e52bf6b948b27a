/* linear_ce_cce.h - lesson 5, cuda-v2: linear cross-entropy that never materialises the logits (the Cut
 * Cross-Entropy approach: Wijmans et al., "Cut Your Losses in Large-Vocabulary Language Models", 2024).
 *
 * v1 (cuda, linear_ce_fused.h) holds one chunk's logits [chunk, V] f32 at a time and computes both gradients in
 * forward, as the seed does. v2 holds no logit in global memory at all:
 *     forward   per row, stream over V: z = x[n] . W[v] in a register, online logsumexp (linear_ce_math.h);
 *               keep lse (N,) f32, the only thing saved besides references to the inputs; loss = mean(lse - z[t])
 *     backward  recompute every z from x and W, form g = (softmax - onehot) * dloss / n_valid on the fly, and
 *               reduce it at once into dx (N, H) (fp32 sums, rounded once to bf16) and dW (V, H) f32
 * so the gradients are allocated in backward, not kept from forward: after forward only lse (4N bytes) and the
 * loss are alive beside the inputs. The price is recomputation: the logits are computed three times (forward, dx,
 * dW) instead of once. Kernels: kernels/linear_ce_v2.cu; launch constants: kernels/linear_ce_math.h.
 */
#ifndef OPTIMIZED_LINEAR_CE_CCE_H
#define OPTIMIZED_LINEAR_CE_CCE_H

#include <stdint.h>
#include "../kernels/runtime/bf16.h"
#include "../kernels/linear_ce_problem.h"
#include "../kernels/runtime/mem_formula.h"

#ifdef __cplusplus
extern "C" {
#endif
#include "arena.h" /* a C header without its own extern "C" */

/* what forward saves: the inputs by reference (autograd's save_for_backward) and one float per row */
typedef struct {
    const bf16 *x;         /* (N, H) bf16 input */
    const bf16 *W;         /* (V, H) bf16 input */
    const int32_t *target; /* (N,) int32 input */
    float *lse;            /* (N,) f32 logsumexp of each row's logits, 0 for ignored rows; allocated here */
} cce_lce_saved;

/* Device pointers. Allocates and returns loss (1,) f32; fills saved. */
/* The forward both CCE versions share: lse [N] saved, the row losses reduced to the mean loss; only the kernel
 * that walks V differs (v2: FP32 lanes; v3: bf16 tensor cores), passed as `launch`. */
typedef void (*cce_forward_launch)(int N, int V, int H, const bf16 *x, const bf16 *W, const int32_t *target,
                                   float *lse, float *row_loss);
float *cuda_cce_forward_with(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                             cce_lce_saved *saved, cce_forward_launch launch);
float *cuda_cce_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                        cce_lce_saved *saved);
/* Allocates *dx (N, H) bf16 and *dW (V, H) f32 from the recomputed logits; frees saved->lse. */
void cuda_cce_backward(const lce_dims *d, cce_lce_saved *saved, const float *dloss, bf16 **dx, float **dW);

/* forward's workspace, one dev_alloc block freed before forward returns */
typedef struct {
    float *row_loss; /* (N,) f32 each row's loss (0 for ignored rows), summed into the loss */
    float *scale;    /* (1,) f32 1 / n_valid */
} cuda_cce_workspace;
void cuda_cce_carve(arena *a, const lce_dims *d, cuda_cce_workspace *w);
size_t cuda_cce_workspace_bytes(const lce_dims *d);
mem_formula cuda_cce_memory(const lce_dims *d);
/* NULL when the dimensions fit the kernels (int indexing, grid, the dx kernel's shared memory), else why not */
const char *cuda_cce_unfit(const lce_dims *d);

#ifdef __cplusplus
}
#endif

#endif
