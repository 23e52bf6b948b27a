/* linear_ce_kernels.h - launchers of lesson 5's CUDA kernels (kernels/linear_ce_kernels.cu). CUDA C++ only.
 * Every pointer is a device pointer; shapes are in the comments. Each launcher checks the launch. */
#ifndef KERNELS_LINEAR_CE_KERNELS_H
#define KERNELS_LINEAR_CE_KERNELS_H

#include <stdint.h>
#include "runtime/bf16.h"

/* scale (1,) = 1 / (rows of target (N,) that are not LCE_IGNORE), 0 when none */
void lce_launch_mean_scale(long long N, const int32_t *target, float *scale);
/* One block per row of z (rows, V) f32: logsumexp, row_loss (rows,) = lse - z[t] (0 if ignored), and the gradient
 * (softmax - onehot) * scale written over the row as bf16, row r at (bf16 *)(z + r V) (row stride 2V). */
void lce_launch_rows(int rows, int V, float *z, const int32_t *target, const float *scale, float *row_loss);
/* loss (1,) = scale * sum of row_loss (N,), summed in double */
void lce_launch_loss(long long N, const float *row_loss, const float *scale, float *loss);
/* p (n,) *= g[0] in place: bf16 (rounded again) and f32 */
void lce_launch_scale_bf16(long long n, bf16 *p, const float *g);
void lce_launch_scale_f32(long long n, float *p, const float *g);

#endif
