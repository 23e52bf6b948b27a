/* linear_ce_fused.h - lesson 5, optimized: the same chunk loop with no (V, H) temporary.
 *
 * Per chunk of rows (the seed's chunk rule, kernels/linear_ce_problem.h):
 *     logits (chunk, V) f32   = x_chunk . W^T          a GEMM with a float32 output (cublasGemmEx: bf16 A and
 *     B,
 *                                                       f32 C, compute 32F)
 *     one pass per row over the logits: online logsumexp, the row's loss, then the gradient written over the
 *     row in bf16 (row r's bf16 gradient occupies the first half of its own f32 row: row stride 2V elements)
 *     grad_input[chunk] (chunk, H) = g . W             f32 accumulation, rounded once to bf16
 *     grad_weight (V, H) f32  = 1 * grad_weight + g^T . x_chunk      beta = 1: accumulated in place
 * so the weight gradient is one pass over (V, H) per chunk and no chunk's contribution is rounded to bf16
 * before it is added. What stays allocated: grad_weight (V, H) f32, grad_input (N, H) bf16 (saved for
 * backward, as in the seed) and one chunk-sized workspace. Backward multiplies both by dloss in place.
 */
#ifndef OPTIMIZED_LINEAR_CE_FUSED_H
#define OPTIMIZED_LINEAR_CE_FUSED_H

#include <stdint.h>
#include <stdio.h>
#include "../kernels/runtime/bf16.h"
#include "../kernels/linear_ce_problem.h"
#include "../kernels/runtime/mem_formula.h"
#include "linear_ce_rows.h"

#ifdef __cplusplus
extern "C" {
#endif
#include "arena.h" /* a C header without its own extern "C" */

typedef struct {
    float *grad_weight; /* (V, H) f32 */
    bf16 *grad_input;   /* (N, H) bf16 */
} fused_lce_saved;

/* --- CPU ------------------------------------------------------------------------------------------------ */
/* The CPU version runs k of the seed's chunks at once, k = ceil(LCE_CPU_GEMM_ROWS / chunk) (1 when the chunk
 * is already that large, as at the seed's size: chunk 256): a GEMM whose output is the (V, H) weight gradient
 * reads and writes all of it for every block of rows, so 16-row chunks (medium) made cpu a pass over 32 MB of
 * memory per 16 rows, at half of PyTorch's float32 speed; 128 rows per pass brings it to PyTorch's. The
 * logits buffer grows to (block, V) f32 for it; the memory formula counts it. Rows are independent, so the
 * results are the same up to the order of the float32 additions over rows inside the dW GEMM. */
#define LCE_CPU_GEMM_ROWS 128
size_t cpu_lce_block_rows(const lce_dims *d); /* rows per block: k * chunk, at most N */
/* Allocates and returns loss (1,) f32; fills saved. x (N, H) bf16, W (V, H) bf16, target (N,) int32. */
float *cpu_lce_forward(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target,
                       fused_lce_saved *saved);
/* Scales the saved gradients by dloss (1,) in place: *dx (N, H) bf16, *dW (V, H) f32. */
void cpu_lce_backward(const lce_dims *d, fused_lce_saved *saved, const float *dloss, bf16 **dx, float **dW);
/* The row pass between the logits and the gradient GEMMs: cpu_lce_rows (linear_ce_rows.h). */
size_t cpu_lce_workspace_bytes(const lce_dims *d);
mem_formula cpu_lce_memory(const lce_dims *d);

#ifdef __cplusplus
}
#endif

#endif
