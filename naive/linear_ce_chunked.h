/* linear_ce_chunked.h - lesson 5, naive: the seed's chunked fused linear cross-entropy, temporaries included.
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
 * cast: V*H*6 bytes on top of everything else. The CPU's bf16 GEMMs are optimized/linear_ce_gemm.h's.
 */
#ifndef NAIVE_LINEAR_CE_CHUNKED_H
#define NAIVE_LINEAR_CE_CHUNKED_H

#include <stdint.h>
#include "../kernels/runtime/bf16.h"
#include "../kernels/linear_ce_problem.h"
#include "../kernels/runtime/mem_formula.h"

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

#endif
