/* linear_ce_kernels_v3.h - launchers of lesson 5's cuda-v3 kernels (kernels/linear_ce_kernels_v3.cu): Cut
 * Cross-Entropy on tensor cores, no logit ever in global memory. CUDA C++ only. Every pointer is a device pointer;
 * shapes are in the comments; lse is the row's logsumexp (0 for an ignored row). Backward's gradient scale is
 * scale[0] * dloss[0]: 1 / n_valid times the upstream gradient. filter != 0 skips every tile update whose
 * |softmax - onehot| entries are all below LCE_FILTER_EPS (linear_ce_math.h) and counts it in *skipped.
 * Each launcher checks the launch. */
#ifndef KERNELS_LINEAR_CE_KERNELS_V3_H
#define KERNELS_LINEAR_CE_KERNELS_V3_H

#include <stdint.h>
#include "runtime/bf16.h"

/* x (N, H) bf16, W (V, H) bf16, target (N,) -> lse (N,) and row_loss (N,) = lse - z[t] (0 for ignored rows) */
void lce3_launch_forward(int N, int V, int H, const bf16 *x, const bf16 *W, const int32_t *target, float *lse,
                         float *row_loss);
/* dx (N, H) bf16 = G . W with G (N, V) = (softmax - onehot) * scale * dloss recomputed tile by tile and rounded
 * to bf16 for the tensor cores; summed in dx_acc (N, H) f32 (a workspace, overwritten) and rounded once */
void lce3_launch_dx(int N, int V, int H, const bf16 *x, const bf16 *W, const int32_t *target, const float *lse,
                    const float *scale, const float *dloss, int filter, float *dx_acc, bf16 *dx,
                    unsigned *skipped);
/* dW (V, H) f32 = G^T . x, each V-tile written by one block only (overwritten, not accumulated onto) */
void lce3_launch_dw(int N, int V, int H, const bf16 *x, const bf16 *W, const int32_t *target, const float *lse,
                    const float *scale, const float *dloss, int filter, float *dW, unsigned *skipped);

#endif
