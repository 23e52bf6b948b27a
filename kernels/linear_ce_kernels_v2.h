/* linear_ce_kernels_v2.h - launchers of lesson 5's cuda-v2 kernels (kernels/linear_ce_kernels_v2.cu): the Cut
 * Cross-Entropy way, where no logit is ever stored in global memory. CUDA C++ only. Every pointer is a device
 * pointer; shapes are in the comments; lse is the row's logsumexp (0 for an ignored row). Each launcher checks
 * the launch. Backward's gradient scale is scale[0] * dloss[0]: 1 / n_valid times the upstream gradient. */
#ifndef KERNELS_LINEAR_CE_KERNELS_V2_H
#define KERNELS_LINEAR_CE_KERNELS_V2_H

#include <stdint.h>
#include "runtime/bf16.h"

/* x (N, H) bf16, W (V, H) bf16, target (N,) -> lse (N,) and row_loss (N,) = lse - z[t] (0 for ignored rows) */
void lce2_launch_forward(int N, int V, int H, const bf16 *x, const bf16 *W, const int32_t *target, float *lse,
                         float *row_loss);
/* dx (N, H) bf16 = g . W, g (N, V) = (softmax - onehot) * scale * dloss recomputed block by block, f32 sums */
void lce2_launch_dx(int N, int V, int H, const bf16 *x, const bf16 *W, const int32_t *target, const float *lse,
                    const float *scale, const float *dloss, bf16 *dx);
/* dW (V, H) f32 = g^T . x, each V-tile written by one block only (overwritten, not accumulated onto) */
void lce2_launch_dw(int N, int V, int H, const bf16 *x, const bf16 *W, const int32_t *target, const float *lse,
                    const float *scale, const float *dloss, float *dW);

#endif
