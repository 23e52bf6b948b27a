/* bmm_launch.h - lesson 1's CUDA launchers (kernels/bmm_vN.cu), called by optimized/bmm_grouped.cu, which
 * owns the device memory. Every pointer is a device pointer; CUDA sources only (C++ linkage). */
#ifndef KERNELS_BMM_LAUNCH_H
#define KERNELS_BMM_LAUNCH_H

#include "bmm_problem.h"

/* cuda-v1: out (B, G, N) = x (B, G*K) . W (G, K, N) group by group */
void bmm1_forward(const bmm_dims *d, const float *x, const float *W, float *out);
/* cuda-v1: dx (B, G*K) = dout . W^T, dW (G, K, N) = x^T . dout */
void bmm1_backward(const bmm_dims *d, const float *x, const float *W, const float *dout, float *dx,
                   float *dW);

#endif
